"""Serialization shared by the ALBERT models: each is rebuilt from its `AlbertConfig`."""


class RebuiltFromAlbertConfig:
    """`get_config`/`from_config` for a model whose whole structure follows from its config.

    Subclasses set `self.config` and `self._policy_name` and add any other constructor
    arguments through `extra_config()`.
    """

    def extra_config(self):
        return {}

    def get_config(self):
        return {
            "config": self.config.to_dict(),
            "dtype": self._policy_name,
            "name": self.name,
            **self.extra_config(),
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)
