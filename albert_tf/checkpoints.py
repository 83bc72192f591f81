"""Reading and writing checkpoints in the original's TF1 format (google-research/albert names).

`load_tf1_checkpoint` puts a released (or fine-tuned) TF1 checkpoint into our Keras models;
`save_tf1_checkpoint` writes our weights back under the original names, for the original code,
HF's `load_tf_weights_in_albert` and any tool that reads name-based checkpoints. The name map
itself is declared in `albert_tf.checkpoint_names`.
"""

import dataclasses
import fnmatch
import json
import os

import tensorflow as tf

from albert_tf.checkpoint_names import (
    GLOBAL_STEP,
    HUB_MODULE_PREFIX,
    group0_name,
    is_training_state,
    tf1_variables,
)
from albert_tf.io_utils import atomic_open, temporary_name

# The prefix inside the released tarballs (albert_base/model.ckpt-best.index, ...).
RELEASED_CHECKPOINT_NAME = "model.ckpt-best"
# Where a TF1 Hub module directory keeps its weights.
HUB_VARIABLES_PREFIX = os.path.join("variables", "variables")

# For a classifier initialised from a pretraining checkpoint: its new head is missing from the
# checkpoint, and the pretraining heads are not needed.
CLASSIFIER_HEAD_NAMES = ("output_weights", "output_bias")
PRETRAINING_HEAD_NAMES = ("cls/*",)

_MAX_LISTED_NAMES = 20


class CheckpointMismatchError(ValueError):
    """Strict loading found missing or unused names; `.report` holds the full lists."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


@dataclasses.dataclass(frozen=True)
class CheckpointLoadReport:
    """What `load_tf1_checkpoint` did: names are the original's (without any `module/`).

    Attributes:
        path: the checkpoint prefix that was read.
        loaded: model variables that were assigned.
        missing: model variables the checkpoint lacks (left as they were).
        unused: checkpoint weights no model variable took.
        skipped: entries that are not weights to load: optimizer slots, `global_step`, the tied
            copies and identity projections of other formats.
        sources: {variable: checkpoint name} where they differ (`init_from_group0`).
        hub_prefix: whether the names carried the TF-Hub `module/` prefix.
    """

    path: str
    loaded: tuple
    missing: tuple
    unused: tuple
    skipped: tuple
    sources: dict
    hub_prefix: bool

    def summary(self):
        notes = []
        if self.hub_prefix:
            notes.append(f"`{HUB_MODULE_PREFIX}` prefix stripped")
        if self.sources:
            notes.append(f"{len(self.sources)} read from group_0")
        lines = [
            f"Loaded {len(self.loaded)} of {len(self.loaded) + len(self.missing)} variables "
            f"from {self.path}" + (f" ({'; '.join(notes)})" if notes else "") + "."
        ]
        if self.missing:
            lines.append(f"Missing from the checkpoint ({len(self.missing)}): {', '.join(self.missing)}")
        if self.unused:
            lines.append(f"Unused checkpoint weights ({len(self.unused)}): {', '.join(self.unused)}")
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)} entries that are not weights to load "
                         "(optimizer slots, global_step, tied copies).")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


def resolve_checkpoint_prefix(path):
    """A checkpoint prefix from a prefix, an `.index` file, a checkpoint directory or a Hub module."""
    path = os.fspath(path)
    if path.endswith(".index") and tf.io.gfile.exists(path):
        return path[: -len(".index")]
    if tf.io.gfile.isdir(path):
        return _prefix_in_directory(path)
    if not tf.io.gfile.exists(path + ".index"):
        raise ValueError(
            f"{path} is not a checkpoint: {path}.index does not exist; "
            f"pass a prefix such as .../{RELEASED_CHECKPOINT_NAME} or a directory holding one."
        )
    return path


def _prefix_in_directory(directory):
    latest = tf.train.latest_checkpoint(directory)
    if latest and tf.io.gfile.exists(latest + ".index"):
        return latest
    for name in (RELEASED_CHECKPOINT_NAME, HUB_VARIABLES_PREFIX):
        prefix = os.path.join(directory, name)
        if tf.io.gfile.exists(prefix + ".index"):
            return prefix
    indexes = sorted(tf.io.gfile.glob(os.path.join(directory, "*.index")))
    if len(indexes) == 1:
        return indexes[0][: -len(".index")]
    found = f"several: {[os.path.basename(index) for index in indexes]}" if indexes else "none"
    raise ValueError(
        f"checkpoint directory {directory} holds no single checkpoint (*.index files: "
        f"{found}) and no `checkpoint` file naming one; pass the checkpoint prefix instead."
    )


def _open_checkpoint(prefix):
    try:
        return tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        message = str(error).splitlines()[0]
        raise ValueError(f"{prefix} is not a readable checkpoint ({message}).") from None


def _matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _listed(names):
    shown = ", ".join(names[:_MAX_LISTED_NAMES])
    more = len(names) - _MAX_LISTED_NAMES
    return shown + (f" ... (+{more} more, see error.report)" if more > 0 else "")


def load_tf1_checkpoint(
    model,
    path,
    strict=True,
    init_from_group0=False,
    allow_missing=(),
    allow_unused=(),
):
    """Loads an original TF1 checkpoint into an ALBERT model and reports what was loaded.

    Works for the released tarballs (`.../model.ckpt-best` or its directory), checkpoints written
    by the original's run_pretraining / run_classifier, checkpoints with TF-Hub's `module/`
    prefix, a TF1 Hub module directory, and `save_tf1_checkpoint` output. Optimizer slots and
    `global_step` are skipped. Nothing is assigned unless every check passes.

    Args:
        model: an `AlbertModel`, `AlbertPretrainingModel` or `AlbertClassifier`.
        path: a checkpoint prefix, its `.index` file, or a directory holding one checkpoint.
        strict: if True, a model variable missing from the checkpoint or a checkpoint weight the
            model does not use is an error (except those matched by `allow_missing` /
            `allow_unused`). Shape mismatches are always errors.
        init_from_group0: the original's `--init_from_group0`: a variable under `group_N` that
            the checkpoint lacks is read from `group_0`, so a multi-group or unshared model can
            start from a released all-shared checkpoint.
        allow_missing: names or glob patterns that may be missing even when strict, e.g.
            `CLASSIFIER_HEAD_NAMES` for a classifier started from a pretraining checkpoint.
        allow_unused: names or glob patterns that may go unused even when strict, e.g.
            `PRETRAINING_HEAD_NAMES` ("cls/*").

    Returns:
        A `CheckpointLoadReport`; `print(report)` gives a summary.
    """
    prefix = resolve_checkpoint_prefix(path)
    reader = _open_checkpoint(prefix)
    stored_shapes = reader.get_variable_to_shape_map()
    hub_prefix = any(name.startswith(HUB_MODULE_PREFIX) for name in stored_shapes)
    stored_names = {name.removeprefix(HUB_MODULE_PREFIX): name for name in stored_shapes}
    skipped = sorted(name for name in stored_names if is_training_state(name))

    variables = tf1_variables(model)
    sources, missing = {}, []
    for name in variables:
        if name in stored_names:
            sources[name] = name
        elif init_from_group0 and group0_name(name) in stored_names:
            sources[name] = group0_name(name)
        else:
            missing.append(name)
    used = set(sources.values())
    unused = sorted(set(stored_names) - used - set(skipped))
    report = CheckpointLoadReport(
        path=prefix,
        loaded=tuple(sources),
        missing=tuple(missing),
        unused=tuple(unused),
        skipped=tuple(skipped),
        sources={name: source for name, source in sources.items() if name != source},
        hub_prefix=hub_prefix,
    )

    mismatches = [
        f"{name} (checkpoint {source}: {stored_shapes[stored_names[source]]}, "
        f"model: {list(variables[name].shape)})"
        for name, source in sources.items()
        if list(stored_shapes[stored_names[source]]) != list(variables[name].shape)
    ]
    if mismatches:
        raise ValueError(
            f"load_tf1_checkpoint: shape mismatch loading {prefix} into {type(model).__name__}: "
            f"{'; '.join(mismatches)}. Build the model from the config that ships with the checkpoint."
        )
    if strict:
        _check_strict(model, report, allow_missing, allow_unused)

    for name, source in sources.items():
        variable = variables[name]
        value = reader.get_tensor(stored_names[source])
        variable.assign(tf.cast(value, variable.dtype))
    return report


def _check_strict(model, report, allow_missing, allow_unused):
    missing = [name for name in report.missing if not _matches(name, allow_missing)]
    unused = [name for name in report.unused if not _matches(name, allow_unused)]
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} model variable(s) missing from the checkpoint: {_listed(missing)} "
            "(allow them with allow_missing=..., e.g. CLASSIFIER_HEAD_NAMES for a new head)"
        )
    if unused:
        problems.append(
            f"{len(unused)} checkpoint weight(s) unused by the model: {_listed(unused)} "
            "(allow them with allow_unused=..., e.g. PRETRAINING_HEAD_NAMES)"
        )
    if problems:
        raise CheckpointMismatchError(
            f"load_tf1_checkpoint: {report.path} does not match {type(model).__name__}: "
            f"{'; '.join(problems)}; or pass strict=False.",
            report,
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

