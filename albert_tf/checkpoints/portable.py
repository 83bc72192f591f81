"""Portable checkpoints: what pretraining and fine-tuning write on the JAX and PyTorch backends.

TensorFlow's object-based checkpoints (`tf.train.Checkpoint`) hold TensorFlow variables only, so
off TensorFlow a checkpoint is a directory at the prefix a TensorFlow run would use (`ckpt-N/`,
`best/model/`) holding safetensors files (no pickle, no TensorFlow, read on every backend):

    weights.safetensors         the model's weights under the original's TF1 names (`tf1_variables`)
    training_state.safetensors  optimizer variables and dropout seed states, in the model's order
    state.json                  step, batches drawn, the backend that wrote it, run records

`checkpoints.load` reads `weights.safetensors` into any model kind on any backend, so a model
trained on JAX or PyTorch is evaluated and exported on TensorFlow with today's commands.
"""

import json
import os
import re

WEIGHTS_FILE = "weights.safetensors"
TRAINING_STATE_FILE = "training_state.safetensors"
STATE_FILE = "state.json"
FORMAT = "portable checkpoint"
_CHECKPOINT_DIR = re.compile(r"ckpt-(\d+)")


def is_portable_checkpoint(path):
    """Whether `path` is a portable checkpoint directory (it holds `weights.safetensors`)."""
    return os.path.isfile(os.path.join(os.fspath(path), WEIGHTS_FILE))


def portable_checkpoints(directory):
    """{step: path} of the complete `ckpt-N/` portable checkpoints in `directory`."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        return {}
    found = {}
    for name in os.listdir(directory):
        match = _CHECKPOINT_DIR.fullmatch(name)
        path = os.path.join(directory, name)
        if match and os.path.isfile(os.path.join(path, STATE_FILE)) and is_portable_checkpoint(path):
            found[int(match.group(1))] = path
    return found


def latest_portable_checkpoint(directory):
    """The newest complete `ckpt-N/` in `directory`, or None."""
    found = portable_checkpoints(directory)
    return found[max(found)] if found else None


def find_portable_checkpoint(path):
    """The portable checkpoint `path` names: itself, the newest `ckpt-N/` in it or in its
    `checkpoints/`, or its `best/model/` (a run's output directory); None if there is none."""
    path = os.fspath(path)
    if is_portable_checkpoint(path):
        return path
    for directory in (path, os.path.join(path, "checkpoints")):
        latest = latest_portable_checkpoint(directory)
        if latest is not None:
            return latest
    best = os.path.join(path, "best", "model")
    return best if is_portable_checkpoint(best) else None


def read_state(path):
    """The `state.json` of a portable checkpoint (a dict)."""
    with open(os.path.join(path, STATE_FILE), encoding="utf-8") as handle:
        return json.loads(handle.read())


def write_arrays(path, arrays, metadata=None):
    """{name: NumPy array} to a safetensors file."""
    from safetensors.numpy import save_file  # pylint: disable=g-import-not-at-top

    save_file({name: _contiguous(value) for name, value in arrays.items()}, path, metadata=metadata)


def read_arrays(path):
    """A safetensors file as {name: NumPy array}; a damaged file is a ValueError naming it."""
    from safetensors import SafetensorError  # pylint: disable=g-import-not-at-top
    from safetensors.numpy import load_file  # pylint: disable=g-import-not-at-top

    try:
        return load_file(path)
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{path}: not a readable safetensors file ({error}); the checkpoint is damaged") from None


def read_portable(path):
    """The `StoredWeights` of a portable checkpoint (`path`: a directory `find_portable_checkpoint` finds)."""
    from albert_tf.checkpoints.stored import StoredWeights  # pylint: disable=g-import-not-at-top

    found = find_portable_checkpoint(path)
    if found is None:
        raise FileNotFoundError(f"{path} holds no portable checkpoint ({WEIGHTS_FILE})")
    arrays = read_arrays(os.path.join(found, WEIGHTS_FILE))
    return StoredWeights(path=found, format=FORMAT, shapes={name: list(value.shape) for name, value in arrays.items()},
                         read=arrays.__getitem__)


def _contiguous(value):
    import numpy as np  # pylint: disable=g-import-not-at-top

    return np.require(value, requirements="C")  # not ascontiguousarray: it makes a scalar 1-D
