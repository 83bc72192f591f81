"""Serialization shared by the ALBERT models: each is rebuilt from its `AlbertConfig`, or read
with its config from a directory of weights (`from_pretrained`)."""


class RebuiltFromAlbertConfig:
    """`get_config`/`from_config` for a model whose whole structure follows from its config.

    Subclasses set `self.config`, `self.dtype_policy_name` and `self.kernels`, and add any other
    constructor arguments through `extra_config()`.
    """

    def extra_config(self):
        return {}

    def get_config(self):
        return {
            "config": self.config.to_dict(),
            "dtype": self.dtype_policy_name,
            "kernels": self.kernels,
            "name": self.name,
            **self.extra_config(),
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

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
        from albert_tf.checkpoints import load, read_config  # pylint: disable=g-import-not-at-top

        model = cls(read_config(directory), **kwargs)
        if hasattr(model, "example_inputs"):
            model(model.example_inputs())  # the SQuAD and RACE heads are built on a first call
        model.load_report = load(model, directory, strict)
        return model
