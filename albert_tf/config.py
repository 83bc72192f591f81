"""`AlbertConfig`: the released `albert_config.json` format as a dataclass, validated at construction."""

import copy
import dataclasses
import json

from albert_tf import io_utils
from albert_tf.io_utils import atomic_open

SHARING_MODES = ("all", "attention", "ffn", "none")
ACTIVATIONS = ("gelu", "relu", "tanh", "linear")
ATTENTION_TYPES = ("dense", "block_sparse")
# The block-sparse keys, left out of `to_dict` at these values: a dense config's JSON has the released keys only.
_ATTENTION_DEFAULTS = {"attention_type": "dense", "block_size": None, "num_random_blocks": None}

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


def min_sparse_length(block_size, num_random_blocks):
    """Sequences of this length or shorter run dense attention: BigBird's rule (Hugging Face's
    `BigBirdModel` switches to full attention when seq_len <= (5 + 2r) * block_size)."""
    return (5 + 2 * num_random_blocks) * block_size


@dataclasses.dataclass
class AlbertConfig:
    """Hyperparameters of an ALBERT model, as in google-research/albert's `albert_config.json`.

    Defaults are the original's (they describe xxlarge); only `vocab_size` is required.
    `hidden_act="gelu"` is the tanh approximation, as in the original. `sharing` is ours:
    which sub-layers are shared across the layers of a group ("all" is the paper's ALBERT).
    `released_keys` holds the keys released files carry that the model does not read
    (`net_structure_type`, ...): `from_dict` puts them there and `to_dict` writes them back.
    `attention_type` is ours too: "dense" (the paper's) or "block_sparse", BigBird's pattern
    with `block_size` tokens per block and `num_random_blocks` random blocks per query block
    (both required then, and only then).
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
    attention_type: str = "dense"
    block_size: int = None
    num_random_blocks: int = None
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
        self._check_attention_type()

    def _check_attention_type(self):
        if self.attention_type not in ATTENTION_TYPES:
            raise ValueError(
                f"AlbertConfig: unknown `attention_type` {self.attention_type!r}; allowed: {list(ATTENTION_TYPES)}."
            )
        block_keys = ("block_size", "num_random_blocks")
        if self.attention_type == "dense":
            given = [key for key in block_keys if getattr(self, key) is not None]
            if given:
                raise ValueError(f"AlbertConfig: {given} apply only with `attention_type` \"block_sparse\".")
            return
        for key, least in zip(block_keys, (1, 0)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(
                    f"AlbertConfig: `attention_type` \"block_sparse\" needs `{key}`, an integer >= {least} "
                    f"(BigBird's: block_size 64, num_random_blocks 3), got {value!r}."
                )
        shortest = min_sparse_length(self.block_size, self.num_random_blocks)
        if self.max_position_embeddings <= shortest:
            raise ValueError(
                f"AlbertConfig: block-sparse attention runs only on sequences longer than "
                f"(5 + 2 * num_random_blocks) * block_size = {shortest} tokens, but "
                f"`max_position_embeddings` is {self.max_position_embeddings}: lower `block_size` or "
                f"`num_random_blocks`, or raise `max_position_embeddings`."
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
        if not io_utils.exists(path):
            raise FileNotFoundError(f"AlbertConfig: config file {path} does not exist.")
        if io_utils.isdir(path):
            raise ValueError(f"AlbertConfig: {path} is a directory; expected an albert_config.json file.")
        try:
            values = json.loads(io_utils.read_text(path))
        except json.JSONDecodeError as error:
            raise ValueError(f"AlbertConfig: {path} is not valid JSON ({error}).") from None
        if not isinstance(values, dict) or "vocab_size" not in values:
            raise ValueError(f"AlbertConfig: {path} must be a JSON object with at least `vocab_size`.")
        try:
            return cls.from_dict(values)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    def to_dict(self):
        values = {
            key: getattr(self, key)
            for key in self.model_keys()
            if key not in _ATTENTION_DEFAULTS or getattr(self, key) != _ATTENTION_DEFAULTS[key]
        }
        values.update(copy.deepcopy(self.released_keys))
        return values

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        with atomic_open(path, "w") as handle:
            handle.write(self.to_json_string())
