"""The backbone a task model is built on: given, or built from a config."""

from albert_tf.models.albert_model import AlbertModel, as_config


def backbone_for(config, dtype, kernels, backbone):
    """`backbone` (an `AlbertModel`) if given, else a new one from `config`, `dtype` and `kernels`."""
    if backbone is None:
        if config is None:
            raise ValueError("give either `config` (an AlbertConfig or its dict) or `backbone` (an AlbertModel)")
        return AlbertModel(as_config(config), dtype=dtype, kernels=kernels, name="albert")
    if not isinstance(backbone, AlbertModel):
        raise ValueError(f"`backbone` must be an AlbertModel, got {type(backbone).__name__}")
    if config is not None and as_config(config) != backbone.config:
        raise ValueError("`config` differs from `backbone.config`; give only one of them")
    return backbone
