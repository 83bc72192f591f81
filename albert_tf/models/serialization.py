"""Serialization shared by the ALBERT models: each is rebuilt from its `AlbertConfig`."""


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
