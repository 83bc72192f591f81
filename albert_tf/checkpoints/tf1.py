"""The original's name-based TF1 checkpoints, in and out, and finding a checkpoint in a directory.

In: an original TF1 checkpoint (released tarballs, the original's run_pretraining /
run_classifier output), with or without TF-Hub's `module/` prefix, or a TF1 Hub module directory
(`variables/variables`). Out: `save_tf1_checkpoint`, which the original code, HF's
`load_tf_weights_in_albert` and any tool that reads name-based checkpoints read.
"""

import json
import os

import tensorflow as tf

from albert_tf.checkpoints.names import (BEST_CHECKPOINT_PREFIX, GLOBAL_STEP, HUB_MODULE_PREFIX, HUB_VARIABLES_PREFIX,
                                         RELEASED_CHECKPOINT_NAME, TRAINING_CHECKPOINT_DIR, is_training_state,
                                         tf1_variables)
from albert_tf.checkpoints.stored import StoredWeights
from albert_tf.error_text import error_line
from albert_tf.io_utils import atomic_open, temporary_name
from albert_tf.training.checkpoint_saving import latest_checkpoint


def resolve_checkpoint_prefix(path):
    """A checkpoint prefix from a prefix, its `.index` file, or a directory: a checkpoint
    directory, a released tarball, a Hub module, or a pretraining or fine-tuning output."""
    path = os.fspath(path)
    if path.endswith(".index") and tf.io.gfile.exists(path):
        return path[: -len(".index")]
    if tf.io.gfile.isdir(path):
        return _prefix_in_directory(path)
    if not tf.io.gfile.exists(path + ".index"):
        raise FileNotFoundError(
            f"{path} is not a checkpoint: {path}.index does not exist; pass a prefix such as "
            f".../{RELEASED_CHECKPOINT_NAME} or .../ckpt-1000, a directory holding one, or a "
            ".keras / .weights.h5 file."
        )
    return path


def _prefix_in_directory(directory):
    latest = latest_checkpoint(directory)
    if latest and tf.io.gfile.exists(latest + ".index"):
        return latest
    for name in (RELEASED_CHECKPOINT_NAME, HUB_VARIABLES_PREFIX, BEST_CHECKPOINT_PREFIX):
        prefix = os.path.join(directory, name)
        if tf.io.gfile.exists(prefix + ".index"):
            return prefix
    latest = latest_checkpoint(os.path.join(directory, TRAINING_CHECKPOINT_DIR))
    if latest and tf.io.gfile.exists(latest + ".index"):
        return latest
    indexes = sorted(tf.io.gfile.glob(os.path.join(directory, "*.index")))
    if len(indexes) == 1:
        return indexes[0][: -len(".index")]
    found = f"several: {[os.path.basename(index) for index in indexes]}" if indexes else "none"
    raise FileNotFoundError(
        f"checkpoint directory {directory} holds no single checkpoint (*.index files: "
        f"{found}) and no readable `checkpoint` file naming one; pass the checkpoint prefix instead."
    )


def open_checkpoint(prefix):
    try:
        return tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise ValueError(f"{prefix} is not a readable checkpoint ({error_line(error)}).") from None


def read_tf1(prefix, reader):
    """Original names; TF-Hub's `module/` is stripped, optimizer slots and global_step skipped."""
    stored = reader.get_variable_to_shape_map()
    names = {name.removeprefix(HUB_MODULE_PREFIX): name for name in stored}
    skipped = tuple(sorted(name for name in names if is_training_state(name)))
    return StoredWeights(
        path=prefix,
        format="TF1 checkpoint",
        shapes={name: list(stored[key]) for name, key in names.items() if name not in skipped},
        read=lambda name: reader.get_tensor(names[name]),
        skipped=skipped,
        hub_prefix=any(name.startswith(HUB_MODULE_PREFIX) for name in stored),
    )


def save_tf1_checkpoint(model, prefix, global_step=None):
    """Writes the model's weights as a name-based TF1 checkpoint under the original's names.

    The result (`{prefix}.index` + `{prefix}.data-00000-of-00001`) reads with
    `tf.train.load_checkpoint`, the original's `init_from_checkpoint` and HF's
    `load_tf_weights_in_albert`. Files appear under their final names only when complete, and the
    directory's `checkpoint` file is pointed at the new prefix (relative, so it can be moved).

    Args:
        model: an `AlbertModel`, `AlbertPretrainingModel` or `AlbertClassifier`.
        prefix: the checkpoint prefix to write, e.g. ".../model.ckpt-1000".
        global_step: if given, stored as the int64 scalar `global_step` that TF1 tools expect.

    Returns:
        The prefix written.
    """
    if not tf.executing_eagerly():
        raise RuntimeError("save_tf1_checkpoint: call it eagerly, not inside a tf.function.")
    prefix = os.fspath(prefix)
    directory = os.path.dirname(prefix) or "."
    tf.io.gfile.makedirs(directory)
    variables = tf1_variables(model)
    names = sorted(variables)
    tensors = [tf.convert_to_tensor(variables[name]) for name in names]
    if global_step is not None:
        names.append(GLOBAL_STEP)
        tensors.append(tf.constant(global_step, tf.int64))

    tmp_prefix = temporary_name(prefix)
    data_suffix = ".data-00000-of-00001"
    try:
        tf.raw_ops.SaveV2(
            prefix=tmp_prefix, tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors
        )
        # Data first: a reader finds a checkpoint through its index.
        tf.io.gfile.rename(tmp_prefix + data_suffix, prefix + data_suffix, overwrite=True)
        tf.io.gfile.rename(tmp_prefix + ".index", prefix + ".index", overwrite=True)
    finally:
        for leftover in tf.io.gfile.glob(tmp_prefix + ".*"):
            tf.io.gfile.remove(leftover)
    _point_checkpoint_state(directory, os.path.basename(prefix))
    return prefix


def _point_checkpoint_state(directory, name):
    """Writes the `checkpoint` file that `tf.train.latest_checkpoint(directory)` reads."""
    quoted = json.dumps(name)
    with atomic_open(os.path.join(directory, "checkpoint"), "w") as handle:
        handle.write(f"model_checkpoint_path: {quoted}\nall_model_checkpoint_paths: {quoted}\n")

