"""Checks that a foreign config describes the same network as an `AlbertConfig`, and shared JSON reading."""

import os

from albert_tf.config import AlbertConfig
from albert_tf.json_text import parse_json
from albert_tf.layers.layer_norm import LAYER_NORM_EPSILON

# Keys that fix the network (shapes, head count, activation); dropout and init do not.
ARCHITECTURE_KEYS = (
    "vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "intermediate_size", "inner_group_num", "max_position_embeddings", "type_vocab_size", "hidden_act",
)


def albert_config_from(values, keys, path, **known):
    """The `AlbertConfig` of a foreign config's `values`: `keys` maps each `AlbertConfig` field to
    (the foreign key, its default there); `known` fields are given as they are. A ValueError names `path`."""
    try:
        return AlbertConfig(**{field: values.get(key, default) for field, (key, default) in keys.items()}, **known)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def read_json(path):
    """A JSON object from `path`, or a ValueError / FileNotFoundError naming the file."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist.")
    with open(path, encoding="utf-8") as handle:
        try:
            values = parse_json(handle.read())
        except ValueError as error:
            raise ValueError(f"{path} is not valid JSON ({error}).") from None
    if not isinstance(values, dict):
        raise ValueError(f"{path} must hold a JSON object.")
    return values


def check_layer_norm_epsilon(epsilon, path, key):
    if epsilon != LAYER_NORM_EPSILON:
        raise ValueError(
            f"{path}: `{key}` is {epsilon!r}; ALBERT (and albert-tf) normalizes with "
            f"{LAYER_NORM_EPSILON}, so this model's outputs could not be reproduced."
        )


def stored_groups(config, format_name):
    """How many layer groups a format that shares whole layers (HF, keras-hub) stores for `config`.

    `sharing="none"` is one group per layer; "attention" and "ffn" (ours) share only part of a
    layer, which those formats cannot express.
    """
    if config.sharing == "all":
        return config.num_hidden_groups
    if config.sharing == "none":
        return config.num_hidden_layers
    raise ValueError(
        f"{format_name} ALBERT shares whole layers; a model with sharing={config.sharing!r} cannot be "
        "stored in it. Save it as a TF1 checkpoint instead."
    )


def check_same(foreign, ours, path, format_name, compare_groups=True, longer_positions=False):
    """Raises ValueError if `foreign` (an `AlbertConfig` read from `path`) and `ours` differ in architecture.

    `compare_groups=False` (for `init_from_group0`) lets the group counts and sharing differ;
    `longer_positions=True` (for `extend_positions`) lets the model have more positions.
    """
    extended = longer_positions and foreign.max_position_embeddings < ours.max_position_embeddings
    differences = [
        f"{key} {getattr(foreign, key)!r} (the model has {getattr(ours, key)!r})"
        for key in ARCHITECTURE_KEYS
        if getattr(foreign, key) != getattr(ours, key) and not (extended and key == "max_position_embeddings")
    ]
    groups = stored_groups(ours, format_name) if compare_groups else foreign.num_hidden_groups
    if foreign.num_hidden_groups != groups:
        differences.append(f"num_hidden_groups {foreign.num_hidden_groups} (the model stores {groups} "
                           f"with sharing={ours.sharing!r})")
    if differences:
        raise ValueError(
            f"{path} describes another ALBERT than the model: {'; '.join(differences)} (AlbertConfig "
            "names). Build the model from this config."
        )
