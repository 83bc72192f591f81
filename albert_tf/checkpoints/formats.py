"""Which format a path holds, and the `AlbertConfig` that comes with it.

Hugging Face checkpoint directories and keras-hub presets carry their own `config.json`; an
original TF1 checkpoint and our runs' outputs carry `albert_config.json` beside the weights.
`inspect` looks at a path once for both questions; what it returns stands for the path everywhere
(`load`, `foreign_config`), so a command that needs the config and the weights reads the directory
once.
"""

import dataclasses
import os

from albert_tf.checkpoints import huggingface, keras_hub
from albert_tf.checkpoints.names import ALBERT_CONFIG_NAME
from albert_tf.checkpoints.portable import is_portable_checkpoint
from albert_tf.config import AlbertConfig

HUGGING_FACE = "huggingface"
KERAS_HUB = "keras_hub"


@dataclasses.dataclass(frozen=True)
class InspectedPath:
    """A checkpoint path looked at once (`inspect`): its foreign format (None: a TF1 or TF2
    checkpoint or a Keras file) and, for the others, the `albert_config.json` beside it (or None).
    A path-like object: it goes wherever the path goes."""

    path: str
    format: str = None
    config_file: str = None

    def __fspath__(self):
        return self.path

    def __str__(self):
        return self.path


def inspect(path):
    """`path` (a checkpoint of any format `load` reads) as an `InspectedPath`."""
    if isinstance(path, InspectedPath):
        return path
    path = os.fspath(path)
    found = foreign_format(path)
    return InspectedPath(path, found, None if found else albert_config_file(path))


def foreign_format(path):
    """HUGGING_FACE, KERAS_HUB, or None for anything else (a TF1 or TF2 checkpoint, say)."""
    if isinstance(path, InspectedPath):
        return path.format
    if huggingface.is_huggingface_dir(path):
        return HUGGING_FACE
    if keras_hub.is_keras_hub_preset(path):
        return KERAS_HUB
    return None


def foreign_config(path, erf_gelu_as_tanh=False):
    """The `AlbertConfig` of a foreign checkpoint directory, or None if `path` is not one."""
    found = foreign_format(path)
    if found == HUGGING_FACE:
        return huggingface.albert_config_from_huggingface(os.fspath(path), erf_gelu_as_tanh)
    if found == KERAS_HUB:
        return keras_hub.albert_config_from_keras_hub(os.fspath(path))
    return None


def albert_config_file(path):
    """The `albert_config.json` that belongs to a checkpoint at `path` (a directory or a prefix in
    one, or one level up: fine-tuning keeps `best/model` and `checkpoints/ckpt-N` in its output;
    two for a portable checkpoint's directory),
    or None."""
    if isinstance(path, InspectedPath):
        return path.config_file
    path = os.fspath(path)
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    candidates = [directory, os.path.dirname(directory)]
    if is_portable_checkpoint(path):  # `checkpoints/ckpt-N/` and `best/model/` are one level deeper
        candidates.append(os.path.dirname(candidates[1]))
    for candidate in candidates:
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
    missing = keras_hub.missing_preset_files(path) if config_file is None and os.path.isdir(path) else []
    if missing:
        raise FileNotFoundError(f"{path}: a keras-hub preset without its {' and '.join(missing)}; copy the whole "
                                "preset directory")
    if config_file is None:
        raise FileNotFoundError(f"{path} has no {ALBERT_CONFIG_NAME} beside it (nor a Hugging Face or keras-hub "
                                "config.json); pass the model's config.")
    return AlbertConfig.from_json_file(config_file)
