"""One loader for every weight file of ALBERT: `load(model, path)` matches, checks strictly,
assigns all-or-nothing and reports.

It reads an original TF1 checkpoint (released tarballs, TF-Hub `module/` names, the original's
run_pretraining / run_classifier output), a TF1 Hub module directory, a checkpoint of ours
(pretraining or fine-tuning output: a prefix or its directory), a Keras `.weights.h5` / `.keras`
file, a Hugging Face checkpoint directory or a keras-hub preset. Each format's reader yields the
weights under the original's TF1 names (`names`), so matching, checks and reports are the same
for all; the parts both sides have are loaded (a classifier started from a pretraining
checkpoint takes the backbone).
"""

import dataclasses
import fnmatch
import os
import sys

import keras
import numpy as np

from albert_tf.checkpoints import formats
from albert_tf.checkpoints.huggingface import read_huggingface
from albert_tf.checkpoints.keras_file import read_keras_file
from albert_tf.checkpoints.portable import find_portable_checkpoint, read_portable
from albert_tf.checkpoints.keras_hub import read_keras_hub
from albert_tf.checkpoints.names import HEAD_NAMES, HUB_MODULE_PREFIX, group0_name, tf1_variables
from albert_tf.checkpoints.position_rows import POSITION_TABLE, planned_extension
from albert_tf.error_text import error_line
from albert_tf.io_utils import exists

_MAX_LISTED_NAMES = 20
# `load`'s default for `allow_missing` / `allow_unused`: whole heads that only one side has.
HEADS_ONLY_ONE_SIDE_HAS = "heads only one side has"


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
        format: "TF1 checkpoint", "TF2 checkpoint" (ours), "Keras file", "Hugging Face
            checkpoint" or "keras-hub preset".
        loaded: model variables that were assigned.
        missing: model variables the checkpoint lacks (left as they were); a foreign format's own
            name follows in brackets, as in `bert/pooler/dense/bias (pooler.bias)`.
        unused: checkpoint weights no model variable took (named the same way).
        skipped: entries that are not weights to load: optimizer slots, `global_step`, the tied
            copies and identity projections of other formats.
        sources: {variable: checkpoint name} where they differ (`init_from_group0`).
        hub_prefix: whether the names carried the TF-Hub `module/` prefix.
        new_heads: heads of the model the file does not have (their variables are in `missing`).
        other_heads: heads in the file the model does not have (their weights are in `unused`).
        allowed_missing, allowed_unused: globs (of either name) that strict loading allows.
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
    allowed_missing: tuple = ()
    allowed_unused: tuple = ()
    extended_positions: str = ""

    def unexpected(self):
        """(missing, unused) less the allowed ones (by default the weights of heads only one side
        has): what strict refuses."""
        return ([name for name in self.missing if not _matches(name, self.allowed_missing)],
                [name for name in self.unused if not _matches(name, self.allowed_unused)])

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


def _matches(described, patterns):
    """Whether a report entry ("tf1 name" or "tf1 name (foreign name)") matches a glob by either name."""
    tf1_name, _, foreign = described.partition(" (")
    names = (tf1_name, foreign[:-1]) if foreign else (tf1_name,)
    return any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in patterns)


def _listed(names):
    shown = ", ".join(names[:_MAX_LISTED_NAMES])
    more = len(names) - _MAX_LISTED_NAMES
    return shown + (f" ... (+{more} more, see error.report)" if more > 0 else "")


def open_weights(path, model, erf_gelu_as_tanh=False, init_from_group0=False, longer_positions=False):
    """The weights stored at `path` in any format `load` reads, named for `model` (TF1 names);
    `longer_positions`: a foreign config may have fewer positions than the model."""
    found = formats.foreign_format(path)  # as inspected once, for an `InspectedPath`
    path = os.fspath(path)
    if found == formats.HUGGING_FACE:
        return read_huggingface(model, path, erf_gelu_as_tanh, init_from_group0, longer_positions)
    if found == formats.KERAS_HUB:
        return read_keras_hub(model, path, init_from_group0, longer_positions)
    portable = None if path.endswith((".keras", ".weights.h5")) else find_portable_checkpoint(path)
    if portable is not None:
        return read_portable(portable)
    if path.endswith((".keras", ".weights.h5")):
        if not exists(path):
            raise FileNotFoundError(f"{path} does not exist; expected a Keras .keras or .weights.h5 file.")
        return read_keras_file(path, model, longer_positions)
    return _open_tensorflow_checkpoint(path, model)


def _open_tensorflow_checkpoint(path, model):
    """A TF1 checkpoint or ours (`tf.train.Checkpoint`): TensorFlow's file format, so read with
    TensorFlow, imported only here (the other formats need none, on any Keras backend)."""
    try:
        from albert_tf.checkpoints.ours import OBJECT_GRAPH_KEY, read_ours  # pylint: disable=g-import-not-at-top
        from albert_tf.checkpoints.tf1 import open_checkpoint, read_tf1, resolve_checkpoint_prefix  # pylint: disable=g-import-not-at-top
    except ImportError as error:
        raise ValueError(f"{path}: not a Keras, Hugging Face or keras-hub file, so a TensorFlow checkpoint (TF1 or "
                         f"ours), and reading one needs TensorFlow ({error_line(error)})") from None
    prefix = resolve_checkpoint_prefix(path)
    reader = open_checkpoint(prefix)
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        return read_tf1(prefix, reader)
    try:
        return read_ours(prefix, reader, model)
    except _read_errors() as error:
        raise ValueError(f"{prefix}: cannot read the checkpoint's object graph ({error_line(error)}); its data "
                         "file is truncated or damaged.") from None


def _read_errors():
    """What reading a damaged file raises: IndexError, and TensorFlow's OpError once a TensorFlow
    reader (TF1, ours) has run, which imported TensorFlow."""
    tf = sys.modules.get("tensorflow")
    return (IndexError,) + ((tf.errors.OpError,) if tf is not None else ())


def load(model, path, strict=True, init_from_group0=False, *, allow_missing=HEADS_ONLY_ONE_SIDE_HAS,
         allow_unused=HEADS_ONLY_ONE_SIDE_HAS, erf_gelu_as_tanh=False, extend_positions=None,
         heads_that_differ="error"):
    """Loads the weights at `path` into an ALBERT model and reports what was loaded.

    Only the parts both have are loaded: a classifier from a pretraining checkpoint takes the
    backbone (its new head stays as initialised, the pretraining heads go unused), a backbone
    takes the backbone of any task model's file. Optimizer state and steps are skipped. Nothing
    is assigned unless every check passes.

    Args:
        model: an ALBERT model: `AlbertModel`, `AlbertPretrainingModel`, `AlbertClassifier`,
            `AlbertQuestionAnswering` (SQuAD) or `AlbertMultipleChoice` (RACE).
        path: a checkpoint prefix, its `.index` file, a directory holding a checkpoint (a
            released tarball, a Hub module, run_pretraining / run_classifier output), a
            `.weights.h5` / `.keras` file, a Hugging Face checkpoint directory or a keras-hub
            preset directory; or `formats.inspect(path)`'s answer, not inspected again.
        strict: if True, a model variable missing from the file or a stored weight the model
            does not use is an error, except those `allow_missing` / `allow_unused` allow.
            Shape mismatches are always errors.
        init_from_group0: the original's `--init_from_group0`: a variable under `group_N` that
            the file lacks is read from `group_0`, so a multi-group or unshared model can start
            from a released all-shared checkpoint.
        allow_missing, allow_unused: globs of names (TF1 names, or a foreign format's own) that
            strict loading allows to be missing / unused, e.g. `HEAD_NAMES["classification_head"]`;
            by default the weights of whole heads that only one side has.
        erf_gelu_as_tanh: a Hugging Face config's `hidden_act: "gelu"` (erf) is read as the
            original's tanh GELU (see `huggingface.albert_config_from_huggingface`).
        extend_positions: None, or "repeat": a checkpoint with fewer position embeddings than
            the model's `max_position_embeddings` fills the model's extra rows by repeating its
            learned ones (`position_rows`); said in the report. Without it, a shape error.
        heads_that_differ: what becomes of a head of the model that the file holds under other
            names or shapes (a SQuAD 1.1 head for a 2.0 model, a 3-label classifier's for a
            2-label one): "error" (a shape or strict-name error), or "fresh": it is not loaded and
            starts as initialised (reported as new; its weights in the file go unused), so only a
            head that fits whole is taken over.

    Returns:
        A `CheckpointLoadReport`; `print(report)` gives a summary.

    Raises:
        FileNotFoundError: nothing at `path`. ValueError: not a checkpoint, or it does not fit
        the model (`CheckpointMismatchError` when strict and names differ).
    """
    stored = open_weights(path, model, erf_gelu_as_tanh, init_from_group0, extend_positions is not None)
    variables = tf1_variables(model)
    sources, missing = {}, []
    for name in variables:
        if name in stored.shapes:
            sources[name] = name
        elif init_from_group0 and group0_name(name) in stored.shapes:
            sources[name] = group0_name(name)
        else:
            missing.append(name)
    if heads_that_differ not in ("error", "fresh"):
        raise ValueError(f"heads_that_differ must be 'error' or 'fresh', got {heads_that_differ!r}")
    differing = _heads_that_differ(model, variables, stored, sources) if heads_that_differ == "fresh" else ()
    for head in differing:
        for name in [name for name in sources if _is_head_weight(name, head)]:
            del sources[name]
            missing.append(name)
    used = set(sources.values())
    new_heads = tuple(head for head, patterns in HEAD_NAMES.items() if hasattr(model, head) and (
        head in differing or not any(fnmatch.fnmatchcase(name, p) for name in stored.shapes for p in patterns)))
    other_heads = tuple(head for head, patterns in HEAD_NAMES.items() if (not hasattr(model, head) or head in differing)
                        and any(fnmatch.fnmatchcase(name, p) for name in stored.shapes for p in patterns))
    extended, extended_note = {}, ""
    if POSITION_TABLE in sources:
        fill, extended_note = planned_extension(
            extend_positions, stored.shapes[sources[POSITION_TABLE]][0], variables[POSITION_TABLE].shape[0])
        extended = {POSITION_TABLE: fill} if fill else {}
    if allow_missing == HEADS_ONLY_ONE_SIDE_HAS:
        allow_missing = tuple(pattern for head in new_heads for pattern in HEAD_NAMES[head])
    if allow_unused == HEADS_ONLY_ONE_SIDE_HAS:
        allow_unused = tuple(pattern for head in other_heads for pattern in HEAD_NAMES[head])
    report = CheckpointLoadReport(
        path=stored.path,
        format=stored.format,
        loaded=tuple(sources),
        missing=tuple(stored.described(name) for name in missing),
        unused=tuple(sorted(stored.described(name) for name in set(stored.shapes) - used)),
        skipped=stored.skipped,
        sources={name: source for name, source in sources.items() if name != source},
        hub_prefix=stored.hub_prefix,
        new_heads=new_heads,
        other_heads=other_heads,
        allowed_missing=tuple(allow_missing),
        allowed_unused=tuple(allow_unused),
        extended_positions=extended_note,
    )

    mismatches = [_mismatch(stored, name, source, variables[name])
                  for name, source in sources.items()
                  if stored.shapes[source] != list(variables[name].shape) and name not in extended]
    if mismatches:
        shorter_positions = POSITION_TABLE in sources and not extended and (
            stored.shapes[sources[POSITION_TABLE]][0] < variables[POSITION_TABLE].shape[0])
        raise ValueError(
            f"shape mismatch loading {stored.path} into {type(model).__name__}: "
            f"{'; '.join(mismatches)}. Build the model from the config that ships with the checkpoint"
            + (" (or, for its position table alone, pass extend_positions=\"repeat\")." if shorter_positions else ".")
        )
    if strict:
        _check_strict(model, report)

    values = _read_all(stored, used)  # a damaged file fails here, before any assign
    for name, source in sources.items():
        variable = variables[name]
        value = extended[name](values[source]) if name in extended else values[source]
        variable.assign(keras.ops.cast(value, variable.dtype))
    return report


def _is_head_weight(name, head):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in HEAD_NAMES[head])


def _heads_that_differ(model, variables, stored, sources):
    """The model's heads whose every variable the file does not hold with the same shape."""
    return tuple(head for head in HEAD_NAMES if hasattr(model, head) and any(
        _is_head_weight(name, head) and (name not in sources or stored.shapes[sources[name]] != list(variable.shape))
        for name, variable in variables.items()))


def _mismatch(stored, name, source, variable):
    shape, expected = stored.shapes[source], list(variable.shape)
    foreign = stored.foreign_names.get(source)
    if foreign is not None:
        return f"{foreign} (as {name}: {shape}, model: {expected})"
    return f"{name} (checkpoint {source}: {shape}, model: {expected})"


def _read_all(stored, names):
    """{name: value}; a truncated or damaged file, or a weight holding NaN or infinity (a diverged
    run's), is a ValueError naming it and the weight."""
    values = {}
    for name in sorted(names):
        try:
            values[name] = stored.read(name)
        except _read_errors() as error:
            raise ValueError(f"{stored.path}: cannot read weight {name} ({error_line(error)}); the checkpoint's "
                             "data file is truncated or damaged, nothing was loaded.") from None
        if not np.isfinite(np.asarray(values[name], np.float32)).all():
            raise ValueError(f"{stored.path}: {stored.described(name)} holds NaN or infinite values; "
                             "nothing was loaded.")
    return values


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


def load_foreign(model, path, strict=True, allow_missing=(), allow_unused=(), init_from_group0=False,
                 erf_gelu_as_tanh=False):
    """`load` for a Hugging Face checkpoint or keras-hub preset, or None if `path` is neither.

    Unlike `load`, nothing is allowed to be missing or unused unless `allow_missing` /
    `allow_unused` say so (heads included).
    """
    if formats.foreign_format(path) is None:
        return None
    return load(model, path, strict, init_from_group0, allow_missing=allow_missing, allow_unused=allow_unused,
                erf_gelu_as_tanh=erf_gelu_as_tanh)


def load_huggingface(model, directory, strict=True, allow_missing=(), allow_unused=(), init_from_group0=False,
                     erf_gelu_as_tanh=False):
    """Loads an HF ALBERT checkpoint directory into `model`; returns a `CheckpointLoadReport`.

    As `load_foreign`, but `directory` must be an HF checkpoint. Report names are the original's
    TF1 names (HF names in brackets); `allow_missing` / `allow_unused` take globs of either.
    """
    if formats.foreign_format(directory) != formats.HUGGING_FACE:
        read_huggingface(model, directory, erf_gelu_as_tanh, init_from_group0)  # says what is missing
    return load_foreign(model, directory, strict, allow_missing, allow_unused, init_from_group0, erf_gelu_as_tanh)


def load_keras_hub(model, directory, strict=True, allow_missing=(), allow_unused=(), init_from_group0=False):
    """Loads a keras-hub `AlbertBackbone` preset into `model`; returns a `CheckpointLoadReport`.

    Only the backbone is in a preset: for a task model pass its heads in `allow_missing` (e.g.
    `HEAD_NAMES["masked_lm_head"]`), or use `load`, which allows them by default.
    """
    if formats.foreign_format(directory) != formats.KERAS_HUB:
        read_keras_hub(model, directory, init_from_group0)  # says what is missing
    return load_foreign(model, directory, strict, allow_missing, allow_unused, init_from_group0)
