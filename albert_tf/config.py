"""`AlbertConfig`: the released `albert_config.json` format as a dataclass, validated at construction."""

import copy
import dataclasses
import json

import tensorflow as tf

from albert_tf.io_utils import atomic_open

SHARING_MODES = ("all", "attention", "ffn", "none")
ACTIVATIONS = ("gelu", "relu", "tanh", "linear")

# Keys the released JSON files carry that the model does not read (kept and written back).
_PASSTHROUGH_KEYS = ("net_structure_type", "gap_size", "num_memory_blocks", "down_scale_factor",
                     "layers_to_keep")

_POSITIVE_INT_KEYS = (
    "vocab_size",
    "embedding_size",
    "hidden_size",
    "num_hidden_layers",
    "num_hidden_groups",
    "num_attention_heads",
    "intermediate_size",
    "inner_group_num",
    "max_position_embeddings",
    "type_vocab_size",
)

_FLOAT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range")


@dataclasses.dataclass
class AlbertConfig:
    """Hyperparameters of an ALBERT model, as in google-research/albert's `albert_config.json`.

    Defaults are the original's (they describe xxlarge); only `vocab_size` is required.
    `hidden_act="gelu"` is the tanh approximation, as in the original. `sharing` is ours:
    which sub-layers are shared across the layers of a group ("all" is the paper's ALBERT).
    `released_keys` holds the keys released files carry that the model does not read
    (`net_structure_type`, ...): `from_dict` puts them there and `to_dict` writes them back.
    Validated on construction (`__post_init__`).
    """

    vocab_size: int
    embedding_size: int = 128
    hidden_size: int = 4096
    num_hidden_layers: int = 12
    num_hidden_groups: int = 1
    num_attention_heads: int = 64
    intermediate_size: int = 16384
    inner_group_num: int = 1
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    sharing: str = "all"
    released_keys: dict = dataclasses.field(default_factory=dict)

    @staticmethod
    def model_keys():
        return tuple(field.name for field in dataclasses.fields(AlbertConfig) if field.name != "released_keys")

    def __post_init__(self):
        unknown = sorted(set(self.released_keys) - set(_PASSTHROUGH_KEYS))
        if unknown:
            raise ValueError(
                f"AlbertConfig: unknown key(s) {unknown}; allowed keys are "
                f"{sorted(list(self.model_keys()) + list(_PASSTHROUGH_KEYS))}."
            )
        for key in ("hidden_act", "sharing"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"AlbertConfig: `{key}` must be a string, got {getattr(self, key)!r}.")
        for key in _FLOAT_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"AlbertConfig: `{key}` must be a number, got {value!r} "
                                 f"({type(value).__name__}).")
        for key in _POSITIVE_INT_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"AlbertConfig: `{key}` must be a positive integer, got {value!r}.")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"AlbertConfig: `hidden_size` ({self.hidden_size}) must be divisible by "
                f"`num_attention_heads` ({self.num_attention_heads})."
            )
        if self.num_hidden_layers % self.num_hidden_groups:
            raise ValueError(
                f"AlbertConfig: `num_hidden_layers` ({self.num_hidden_layers}) must be divisible by "
                f"`num_hidden_groups` ({self.num_hidden_groups})."
            )
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(
                f"AlbertConfig: unknown `hidden_act` {self.hidden_act!r}; allowed: {list(ACTIVATIONS)}."
            )
        if self.sharing not in SHARING_MODES:
            raise ValueError(
                f"AlbertConfig: unknown `sharing` {self.sharing!r}; allowed: {list(SHARING_MODES)}."
            )
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"AlbertConfig: `{key}` must be in [0, 1), got {value!r}.")
        if not self.initializer_range > 0:
            raise ValueError(
                f"AlbertConfig: `initializer_range` must be positive, got {self.initializer_range!r}."
            )

    def replace(self, **changes):
        """A copy with some keys changed (validated again)."""
        values = self.to_dict()
        values.update(changes)
        return AlbertConfig.from_dict(values)

    @classmethod
    def from_dict(cls, values):
        """From the released JSON's keys: the model's, and the released ones it keeps aside."""
        values = copy.deepcopy(dict(values))
        released = {key: values.pop(key) for key in list(values) if key not in cls.model_keys()}
        return cls(**values, released_keys=released)

    @classmethod
    def from_json_file(cls, path):
        if not tf.io.gfile.exists(path):
            raise FileNotFoundError(f"AlbertConfig: config file {path} does not exist.")
        if tf.io.gfile.isdir(path):
            raise ValueError(f"AlbertConfig: {path} is a directory; expected an albert_config.json file.")
        with tf.io.gfile.GFile(path, "r") as handle:
            try:
                values = json.load(handle)
            except json.JSONDecodeError as error:
                raise ValueError(f"AlbertConfig: {path} is not valid JSON ({error}).") from None
        if not isinstance(values, dict) or "vocab_size" not in values:
            raise ValueError(f"AlbertConfig: {path} must be a JSON object with at least `vocab_size`.")
        try:
            return cls.from_dict(values)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    def to_dict(self):
        values = {key: getattr(self, key) for key in self.model_keys()}
        values.update(copy.deepcopy(self.released_keys))
        return values

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        with atomic_open(path, "w") as handle:
            handle.write(self.to_json_string())
