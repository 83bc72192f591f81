"""One entry point for the foreign formats: recognise a path's format, read its config, load it.

`checkpoints` loaders and the scripts' `--init_checkpoint` call `load_foreign` first and fall back
to TF1 / TF2 checkpoints when it returns None.
"""

from albert_tf.interop import huggingface, keras_hub

HUGGING_FACE = "huggingface"
KERAS_HUB = "keras_hub"


def foreign_format(path):
    """HUGGING_FACE, KERAS_HUB, or None for anything else (a TF1 or TF2 checkpoint, say)."""
    if huggingface.is_huggingface_dir(path):
        return HUGGING_FACE
    if keras_hub.is_keras_hub_preset(path):
        return KERAS_HUB
    return None


def foreign_config(path, erf_gelu_as_tanh=False):
    """The `AlbertConfig` of a foreign checkpoint directory, or None if `path` is not one."""
    found = foreign_format(path)
    if found == HUGGING_FACE:
        return huggingface.albert_config_from_huggingface(path, erf_gelu_as_tanh)
    if found == KERAS_HUB:
        return keras_hub.albert_config_from_keras_hub(path)
    return None


def load_foreign(model, path, strict=True, allow_missing=(), allow_unused=(), init_from_group0=False,
                 erf_gelu_as_tanh=False, extend_positions=None):
    """Loads a foreign checkpoint into `model` and returns its report, or None if `path` is not one."""
    found = foreign_format(path)
    options = dict(strict=strict, allow_missing=allow_missing, allow_unused=allow_unused,
                   init_from_group0=init_from_group0, extend_positions=extend_positions)
    if found == HUGGING_FACE:
        return huggingface.load_huggingface(model, path, erf_gelu_as_tanh=erf_gelu_as_tanh, **options)
    if found == KERAS_HUB:
        return keras_hub.load_keras_hub(model, path, **options)
    return None
