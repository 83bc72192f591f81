"""Saving and restoring a run's state as portable checkpoints (`albert_tf.checkpoints.portable`):
`tf.train.CheckpointManager`'s duties on the JAX and PyTorch backends, where Keras variables are
not TensorFlow variables.

A checkpoint holds the model, the optimizer's variables (its step is the global step), the
dropout seed states (and on PyTorch its global generator's state), and small values (`state`: batches drawn, run records) as JSON. It is
written into `ckpt-N_temp/` and renamed into place, so a killed save leaves no `ckpt-N/`
(`io_utils.remove_checkpoint_partials` removes the rest). Restoring checks names, shapes and
counts and raises ValueError naming what differs: a checkpoint of another model or optimizer.
"""

import json
import os
import shutil

import keras
import numpy as np

from albert_tf.checkpoints.names import tf1_variables
from albert_tf.checkpoints.portable import (STATE_FILE, TRAINING_STATE_FILE, WEIGHTS_FILE, portable_checkpoints,
                                            read_arrays, read_state, write_arrays)
from albert_tf.error_text import error_line
from albert_tf.training.determinism import dropout_seed_states


# Keras' dropout on PyTorch draws from torch's global generator when its seed generator has no
# seed of its own (ours: seeded by the global seed), so a resumed run needs that state too.
_TORCH_RNG_STATE = "torch/rng_state"


class PortableCheckpoint:
    """What one checkpoint holds: `model`, its `optimizer` (or None) and `state`, a dict of objects
    with `serialize()` -> str and `deserialize(str)` (as `run_records.EvalRecords` and pretraining's
    `DrawnBatches`)."""

    def __init__(self, model, optimizer=None, **state):
        self.model, self.optimizer, self.state = model, optimizer, state

    def write(self, path):
        """Writes the checkpoint to the directory `path` (via `path_temp`); returns `path`."""
        temporary = path + "_temp"
        shutil.rmtree(temporary, ignore_errors=True)
        os.makedirs(temporary)
        write_arrays(os.path.join(temporary, WEIGHTS_FILE),
                     {name: keras.ops.convert_to_numpy(variable) for name, variable in tf1_variables(self.model).items()})
        write_arrays(os.path.join(temporary, TRAINING_STATE_FILE), self._training_arrays())
        with open(os.path.join(temporary, STATE_FILE), "w", encoding="utf-8") as handle:
            handle.write(json.dumps(self._state_values(), indent=1, sort_keys=True) + "\n")
        shutil.rmtree(path, ignore_errors=True)
        os.replace(temporary, path)
        return path

    def read(self, path):
        """Restores everything the checkpoint at `path` holds into the objects; ValueError if it
        is not this model's, optimizer's or state's."""
        _assign_named(tf1_variables(self.model), read_arrays(os.path.join(path, WEIGHTS_FILE)), path, "model weight")
        arrays = read_arrays(os.path.join(path, TRAINING_STATE_FILE))
        torch_rng_state = arrays.pop(_TORCH_RNG_STATE, None)
        _assign_listed(self._training_variables(), arrays, path)
        if torch_rng_state is not None and keras.backend.backend() == "torch":
            import torch  # pylint: disable=g-import-not-at-top

            torch.set_rng_state(torch.from_numpy(torch_rng_state))
        stored = read_state(path)
        for name, value in self.state.items():
            if name not in stored:
                raise ValueError(f"{path}: holds no {name!r}; it was written by another kind of run")
            value.deserialize(stored[name])
        return stored

    def _training_variables(self):
        variables = {f"seed/{index:04d}": variable for index, variable in enumerate(dropout_seed_states(self.model))}
        if self.optimizer is not None:
            variables.update({f"optimizer/{index:04d}": variable
                              for index, variable in enumerate(self.optimizer.variables)})
        return variables

    def _training_arrays(self):
        arrays = {name: keras.ops.convert_to_numpy(variable) for name, variable in self._training_variables().items()}
        if keras.backend.backend() == "torch":
            import torch  # pylint: disable=g-import-not-at-top

            arrays[_TORCH_RNG_STATE] = torch.get_rng_state().numpy()
        return arrays

    def _state_values(self):
        values = {"backend": keras.backend.backend(), "keras_version": keras.__version__}
        if self.optimizer is not None:
            values["step"] = int(keras.ops.convert_to_numpy(self.optimizer.iterations))
        for name, value in self.state.items():
            values[name] = value.serialize()
        return values


class PortableCheckpointManager:
    """`ckpt-N/` checkpoints of `checkpoint` in `directory`, the newest `max_to_keep` kept; the
    attributes and `save(checkpoint_number=)` of `tf.train.CheckpointManager`, which the loops use."""

    def __init__(self, checkpoint, directory, max_to_keep, checkpoint_name="ckpt"):
        if checkpoint_name != "ckpt":
            raise ValueError("portable checkpoints are named ckpt-N")
        self.checkpoint, self.directory, self.max_to_keep = checkpoint, os.fspath(directory), max_to_keep

    @property
    def checkpoints(self):
        """The kept checkpoints, oldest first."""
        found = portable_checkpoints(self.directory)
        return [found[step] for step in sorted(found)]

    @property
    def latest_checkpoint(self):
        kept = self.checkpoints
        return kept[-1] if kept else None

    def save(self, checkpoint_number):
        os.makedirs(self.directory, exist_ok=True)
        path = self.checkpoint.write(os.path.join(self.directory, f"ckpt-{int(checkpoint_number)}"))
        for old in self.checkpoints[:-self.max_to_keep]:
            shutil.rmtree(old, ignore_errors=True)
        return path


def _assign_named(variables, arrays, path, what):
    missing = sorted(set(variables) - set(arrays))
    unused = sorted(set(arrays) - set(variables))
    if missing or unused:
        raise ValueError(f"{path}: not this model's checkpoint ({len(missing)} {what}s missing, e.g. "
                         f"{(missing or ['-'])[0]}; {len(unused)} not in the model, e.g. {(unused or ['-'])[0]})")
    for name, variable in variables.items():
        _assign(variable, arrays[name], path, name)


def _assign_listed(variables, arrays, path):
    if set(variables) != set(arrays):
        raise ValueError(f"{path}: its optimizer and seed state ({len(arrays)} variables) does not fit this "
                         f"run's ({len(variables)}): written with another --optimizer, --mixed_precision or model")
    for name, variable in variables.items():
        _assign(variable, arrays[name], path, name)


def _assign(variable, value, path, name):
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError(f"{path}: {name} has shape {list(value.shape)}, the model's {list(variable.shape)}")
    variable.assign(np.asarray(value, dtype=keras.backend.standardize_dtype(variable.dtype)))


def check_checkpoint_kind(directory):
    """A ValueError when `directory` holds checkpoints of the other kind than this backend writes
    (TensorFlow's on JAX or PyTorch, portable ones on TensorFlow): resuming needs the backend
    that wrote them, and starting afresh would mix two runs in one directory."""
    directory = os.fspath(directory)
    backend = keras.backend.backend()
    portable = portable_checkpoints(directory)
    if backend == "tensorflow" and portable:
        written = read_state(portable[max(portable)]).get("backend", "jax or torch")
        raise ValueError(f"{directory} holds portable checkpoints written on the {written} backend: resume "
                         f"with KERAS_BACKEND={written}, or start from their weights in another output "
                         "directory (--init_checkpoint takes them on any backend)")
    if backend != "tensorflow" and os.path.isfile(os.path.join(directory, "checkpoint")):
        raise ValueError(f"{directory} holds TensorFlow checkpoints: resume with KERAS_BACKEND=tensorflow, or "
                         "start from their weights in another output directory (--init_checkpoint takes them "
                         "where TensorFlow is installed)")


def drop_damaged(directory):
    """Deletes the damaged portable checkpoints newer than the newest intact one in `directory`
    (`--resume_from_intact_checkpoint`); returns a line saying what it did, or None. ValueError,
    deleting nothing, when none is intact."""
    found = portable_checkpoints(directory)
    newest_first = sorted(found, reverse=True)
    intact = next((step for step in newest_first if _is_intact(found[step])), None)
    if intact is None and found:
        raise ValueError(f"{directory}: every checkpoint is damaged; use another output directory")
    dropped = [found[step] for step in newest_first if intact is not None and step > intact]
    for path in dropped:
        shutil.rmtree(path)
    names = ", ".join(os.path.basename(path) for path in dropped)
    return f"deleted the damaged {names}; resuming from {os.path.basename(found[intact])}" if dropped else None


def damage(path):
    """None if every file of the portable checkpoint at `path` reads, else what went wrong."""
    try:
        for name in (WEIGHTS_FILE, TRAINING_STATE_FILE):
            read_arrays(os.path.join(path, name))
        read_state(path)
    except (ValueError, OSError) as error:
        return error_line(error)
    return None


def _is_intact(path):
    return damage(path) is None
