"""Which format a path holds, and the `AlbertConfig` that comes with it.

Hugging Face checkpoint directories and keras-hub presets carry their own `config.json`; an
original TF1 checkpoint and our runs' outputs carry `albert_config.json` beside the weights.
"""

import os

from albert_tf.checkpoints import huggingface, keras_hub
from albert_tf.checkpoints.names import ALBERT_CONFIG_NAME
from albert_tf.config import AlbertConfig

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


def albert_config_file(path):
    """The `albert_config.json` that belongs to a checkpoint at `path` (a directory or a prefix in
    one, or one level up: fine-tuning keeps `best/model` and `checkpoints/ckpt-N` in its output),
    or None."""
    path = os.fspath(path)
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    for candidate in (directory, os.path.dirname(directory)):
        config_file = os.path.join(candidate or ".", ALBERT_CONFIG_NAME)
        if os.path.isfile(config_file):
            return config_file
    return None


def read_config(path, erf_gelu_as_tanh=False):
    """The `AlbertConfig` of the checkpoint at `path`, whatever its format.

    Raises:
        FileNotFoundError: `path` carries no config (a TF1 checkpoint without `albert_config.json`
            beside it). ValueError: the config is not a valid ALBERT config.
    """
    config = foreign_config(path, erf_gelu_as_tanh)
    if config is not None:
        return config
    config_file = albert_config_file(path)
    if config_file is None:
        raise FileNotFoundError(f"{path} has no {ALBERT_CONFIG_NAME} beside it (nor a Hugging Face or keras-hub "
                                "config.json); pass the model's config.")
    return AlbertConfig.from_json_file(config_file)
