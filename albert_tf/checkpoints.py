"""One loader for every weight file of ALBERT, and the original's TF1 format out.

`load(model, path)` reads an original TF1 checkpoint (released tarballs, TF-Hub `module/` names,
the original's run_pretraining / run_classifier output), a TF1 Hub module directory, a checkpoint
of ours (pretraining or fine-tuning output: `tf.train.Checkpoint(model=...)`, a prefix or its
directory) or a Keras `.weights.h5` / `.keras` file (`checkpoint_formats` tells them apart), and
loads the parts the model has: a classifier started from a pretraining checkpoint takes the
backbone. `save_tf1_checkpoint` writes our weights under the original names, for the original
code, HF's `load_tf_weights_in_albert` and any tool that reads name-based checkpoints. The name
map itself is declared in `albert_tf.checkpoint_names`.
"""

import dataclasses
import fnmatch
import json
import os

import tensorflow as tf

from albert_tf.checkpoint_formats import HEAD_NAMES, open_weights, resolve_checkpoint_prefix
from albert_tf.checkpoint_names import GLOBAL_STEP, HUB_MODULE_PREFIX, group0_name, tf1_variables
from albert_tf.error_text import error_line
from albert_tf.io_utils import atomic_open, temporary_name
from albert_tf.position_rows import POSITION_TABLE, planned_extension

__all__ = ["CheckpointLoadReport", "CheckpointMismatchError", "load", "resolve_checkpoint_prefix",
           "save_tf1_checkpoint"]

_MAX_LISTED_NAMES = 20


class CheckpointMismatchError(ValueError):
    """Strict loading found missing or unused names; `.report` holds the full lists."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


@dataclasses.dataclass(frozen=True)
class CheckpointLoadReport:
    """What `load` did. Model variables are named by their TF1 names (without any `module/`).

    Attributes:
        path: the checkpoint prefix or file that was read.
        format: "TF1 checkpoint", "TF2 checkpoint" (ours) or "Keras file".
        loaded: model variables that were assigned.
        missing: model variables the checkpoint lacks (left as they were).
        unused: checkpoint weights no model variable took.
        skipped: entries that are not weights to load: optimizer slots, `global_step`, the tied
            copies and identity projections of other formats.
        sources: {variable: checkpoint name} where they differ (`init_from_group0`).
        hub_prefix: whether the names carried the TF-Hub `module/` prefix.
        new_heads: heads of the model the file does not have (their variables are in `missing`).
        other_heads: heads in the file the model does not have (their weights are in `unused`).
        extended_positions: "P -> L (mode)" when a shorter position table was extended
            (`extend_positions`), else "".
    """

    path: str
    format: str
    loaded: tuple
    missing: tuple
    unused: tuple
    skipped: tuple
    sources: dict
    hub_prefix: bool
    new_heads: tuple = ()
    other_heads: tuple = ()
    extended_positions: str = ""

    def unexpected(self):
        """(missing, unused) less the weights of heads only one side has: what strict refuses."""
        new_head_names = [pattern for head in self.new_heads for pattern in HEAD_NAMES[head]]
        other_head_names = [pattern for head in self.other_heads for pattern in HEAD_NAMES[head]]
        return ([name for name in self.missing if not _matches(name, new_head_names)],
                [name for name in self.unused if not _matches(name, other_head_names)])

    def summary(self):
        notes = [self.format]
        if self.hub_prefix:
            notes.append(f"`{HUB_MODULE_PREFIX}` prefix stripped")
        if self.sources:
            notes.append(f"{len(self.sources)} read from group_0")
        if self.extended_positions:
            notes.append(f"position embeddings extended {self.extended_positions}")
        lines = [
            f"Loaded {len(self.loaded)} of {len(self.loaded) + len(self.missing)} variables "
            f"from {self.path} ({'; '.join(notes)})."
        ]
        if self.new_heads:
            lines.append(f"New (not loaded): {', '.join(self.new_heads)}.")
        if self.other_heads:
            lines.append(f"Not used by this model: {', '.join(self.other_heads)}.")
        missing, unused = self.unexpected()
        if missing:
            lines.append(f"Missing from the checkpoint ({len(missing)}): {', '.join(missing)}")
        if unused:
            lines.append(f"Unused checkpoint weights ({len(unused)}): {', '.join(unused)}")
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)} entries that are not weights to load "
                         "(optimizer slots, global_step, tied copies).")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


def _matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _listed(names):
    shown = ", ".join(names[:_MAX_LISTED_NAMES])
    more = len(names) - _MAX_LISTED_NAMES
    return shown + (f" ... (+{more} more, see error.report)" if more > 0 else "")


def load(model, path, strict=True, init_from_group0=False, extend_positions=None):
    """Loads the weights at `path` into an ALBERT model and reports what was loaded.

    Only the parts both have are loaded: a classifier from a pretraining checkpoint takes the
    backbone (its new head stays as initialised, the pretraining heads go unused), a backbone
    takes the backbone of any task model's file. Optimizer state and steps are skipped. Nothing
    is assigned unless every check passes.

    Args:
        model: an `AlbertModel`, `AlbertPretrainingModel` or `AlbertClassifier`.
        path: a checkpoint prefix, its `.index` file, a directory holding a checkpoint (a
            released tarball, a Hub module, run_pretraining / run_classifier output), a
            `.weights.h5` / `.keras` file, a Hugging Face checkpoint directory or a keras-hub
            preset directory (`albert_tf.interop`).
        strict: if True, a model variable missing from the file or a stored weight the model
            does not use is an error, except whole heads that only one side has. Shape
            mismatches are always errors.
        init_from_group0: the original's `--init_from_group0`: a variable under `group_N` that
            the file lacks is read from `group_0`, so a multi-group or unshared model can start
            from a released all-shared checkpoint.
        extend_positions: None, or "repeat": a checkpoint with fewer position embeddings than
            the model's `max_position_embeddings` fills the model's extra rows by repeating its
            learned ones (`albert_tf.position_rows`); said in the report. Without it, a shape error.

    Returns:
        A `CheckpointLoadReport`; `print(report)` gives a summary.

    Raises:
        FileNotFoundError: nothing at `path`. ValueError: not a checkpoint, or it does not fit
        the model (`CheckpointMismatchError` when strict and names differ).
    """
    foreign = _load_foreign(model, path, strict, init_from_group0, extend_positions)
    if foreign is not None:
        return foreign
    stored = open_weights(path, model)
    variables = tf1_variables(model)
    sources, missing = {}, []
    for name in variables:
        if name in stored.shapes:
            sources[name] = name
        elif init_from_group0 and group0_name(name) in stored.shapes:
            sources[name] = group0_name(name)
        else:
            missing.append(name)
    used = set(sources.values())
    unused = sorted(set(stored.shapes) - used)
    has_head = {head: hasattr(model, head) for head in HEAD_NAMES}
    extended, extended_note = {}, ""
    if POSITION_TABLE in sources:
        fill, extended_note = planned_extension(
            extend_positions, stored.shapes[POSITION_TABLE][0], variables[POSITION_TABLE].shape[0])
        extended = {POSITION_TABLE: fill} if fill else {}
    report = CheckpointLoadReport(
        path=stored.path,
        format=stored.format,
        loaded=tuple(sources),
        missing=tuple(missing),
        unused=tuple(unused),
        skipped=stored.skipped,
        sources={name: source for name, source in sources.items() if name != source},
        hub_prefix=stored.hub_prefix,
        new_heads=tuple(head for head, patterns in HEAD_NAMES.items() if has_head[head]
                        and not any(_matches(name, patterns) for name in stored.shapes)),
        other_heads=tuple(head for head, patterns in HEAD_NAMES.items() if not has_head[head]
                          and any(_matches(name, patterns) for name in stored.shapes)),
        extended_positions=extended_note,
    )

    mismatches = [
        f"{name} (checkpoint {source}: {stored.shapes[source]}, model: {list(variables[name].shape)})"
        for name, source in sources.items()
        if stored.shapes[source] != list(variables[name].shape) and name not in extended
    ]
    if mismatches:
        shorter_positions = POSITION_TABLE in sources and not extended and (
            stored.shapes[POSITION_TABLE][0] < variables[POSITION_TABLE].shape[0])
        raise ValueError(
            f"shape mismatch loading {stored.path} into {type(model).__name__}: "
            f"{'; '.join(mismatches)}. Build the model from the config that ships with the checkpoint"
            + (" (or, for its position table alone, pass extend_positions=\"repeat\")." if shorter_positions else ".")
        )
    if strict:
        _check_strict(model, report)

    values = _read_all(stored, set(sources.values()))  # a damaged file fails here, before any assign
    for name, source in sources.items():
        variable = variables[name]
        value = extended[name](values[source]) if name in extended else values[source]
        variable.assign(tf.cast(value, variable.dtype))
    return report


def _read_all(stored, names):
    """{name: value}; a truncated or damaged file is a ValueError naming it and the weight."""
    values = {}
    for name in sorted(names):
        try:
            values[name] = stored.read(name)
        except (tf.errors.OpError, IndexError) as error:
            raise ValueError(f"{stored.path}: cannot read weight {name} ({error_line(error)}); the checkpoint's "
                             "data file is truncated or damaged, nothing was loaded.") from None
    return values


def _load_foreign(model, path, strict, init_from_group0, extend_positions):
    """A Hugging Face checkpoint or keras-hub preset loaded as `load` loads the others (a head
    only one side has is allowed), or None when `path` is neither."""
    from albert_tf.interop.formats import load_foreign  # interop builds on this module

    heads = tuple(pattern for patterns in HEAD_NAMES.values() for pattern in patterns)
    return load_foreign(model, path, strict=strict, allow_missing=heads, allow_unused=heads,
                        init_from_group0=init_from_group0, extend_positions=extend_positions)


def _check_strict(model, report):
    missing, unused = report.unexpected()
    problems = []
    if missing:
        problems.append(f"{len(missing)} model variable(s) missing from the checkpoint: {_listed(missing)}")
    if unused:
        problems.append(f"{len(unused)} checkpoint weight(s) unused by the model: {_listed(unused)}")
    if problems:
        raise CheckpointMismatchError(
            f"{report.path} does not match {type(model).__name__}: {'; '.join(problems)}; "
            "build the model from the checkpoint's config, or pass strict=False.",
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

