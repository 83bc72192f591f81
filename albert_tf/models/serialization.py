"""Serialization shared by the ALBERT models: each is rebuilt from its `AlbertConfig`, or read
with its config from a directory of weights (`from_pretrained`).

The kernel set is not part of a model's config: it is chosen where the model is built or loaded
(`load_model(path, kernels=...)`), so that a model saved on one machine computes with the set
that suits the machine that loads it. `rebuilt` is the one way to have a built model in another
dtype policy or kernel set with the same weights (an export's float32 reference form, say).
"""

import contextvars

import keras

from albert_tf.checkpoints import load, read_config

_KERNELS_AT_LOAD = contextvars.ContextVar("kernels_at_load", default="reference")


def load_model(path, kernels="reference", **load_args):
    """`keras.saving.load_model(path, **load_args)` for a file holding an ALBERT model, which then
    computes with `kernels` (a name in `albert_tf.kernels.KERNEL_SETS`)."""
    token = _KERNELS_AT_LOAD.set(kernels)
    try:
        return keras.saving.load_model(path, **load_args)
    finally:
        _KERNELS_AT_LOAD.reset(token)


def copied(model, dtype=None, kernels=None):
    """A new model of `model`'s class and config with its weights, computing in `dtype` (a Keras
    dtype policy) with `kernels` (a kernel set's name); None keeps `model`'s own."""
    config = model.get_config()
    if dtype is not None:
        config["dtype"] = dtype
    copy = type(model).from_config(config, kernels=kernels or model.kernels)
    copy.set_weights(model.get_weights())
    return copy


def rebuilt(model, dtype=None, kernels=None):
    """`model` computing in `dtype` with `kernels` (None: as it does): `model` itself when it
    already does (no second copy of the weights), else `copied(model, dtype, kernels)`."""
    same_dtype = dtype is None or (keras.dtype_policies.get(dtype).name
                                   == (model.dtype_policy_name or keras.config.dtype_policy().name))
    if same_dtype and kernels in (None, model.kernels):
        return model
    return copied(model, dtype, kernels)


class RebuiltFromAlbertConfig:
    """`get_config`/`from_config` for a model whose whole structure follows from its config.

    Subclasses set `self.config`, `self.dtype_policy_name` and `self.kernels` (the kernel set's
    name, not saved), and add any other constructor arguments through `extra_config()`.
    """

    def __setattr__(self, name, value):
        # Our models make their layers first, then their functional graph from them. On the torch
        # backend a Keras model is a torch Module, which refuses attributes before its __init__
        # (`_modules` does not exist yet): those are set plainly, the graph tracks the layers.
        if keras.backend.backend() == "torch" and "_modules" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    @property
    def kernel_set(self):
        """The kernel set object the backbone's layers compute through."""
        return self.albert.kernel_set

    def extra_config(self):
        return {}

    def get_config(self):
        return {
            "config": self.config.to_dict(),
            "dtype": self.dtype_policy_name,
            "name": self.name,
            **self.extra_config(),
        }

    @classmethod
    def from_config(cls, config, kernels=None):
        """The model of `config`, computing with `kernels` (default: `load_model`'s, else
        "reference"); a `kernels` key in `config` is ignored: the set is the loading machine's choice."""
        config = {key: value for key, value in config.items() if key != "kernels"}
        return cls(**config, kernels=kernels or _KERNELS_AT_LOAD.get())

    @classmethod
    def from_pretrained(cls, directory, strict=True, **kwargs):
        """The model built from the config at `directory` and loaded with its weights, in one call.

        `directory` is anything `albert_tf.checkpoints.load` reads that carries its config: our
        pretraining or fine-tuning output (`albert_config.json` beside the checkpoints), a
        released TF1 tarball directory (`albert_config.json` + `model.ckpt-*`), a Hugging Face
        checkpoint or a keras-hub preset (their `config.json`). Named after Hugging Face's
        `from_pretrained` rather than keras-hub's `from_preset`: it reads weights trained
        anywhere, in any of these formats, not a preset of one library. `kwargs` go to the
        constructor (`num_labels=`, `dtype=`, `kernels=`, ...); a head the weights lack starts
        fresh, as with `load`, and `strict` is `load`'s. The load report is `model.load_report`.
        """
        model = cls(read_config(directory), **kwargs)
        model.load_report = load(model, directory, strict)
        return model
