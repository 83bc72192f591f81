"""Foreign arrays into a model, and its weights out as foreign arrays, through the TF1 names.

A format's reader produces {foreign name: NumPy array}; `load_arrays` maps those names with the
format's `NameTable` to the original's TF1 names and from there (`checkpoint_names.tf1_variables`)
to our variables, with the strictness and `CheckpointLoadReport` of `checkpoints.load`.
`export_arrays` goes the other way for the writers.
"""

import fnmatch

import numpy as np

from albert_tf.checkpoint_names import PROJECTION_NAMES, group0_name, tf1_variables
from albert_tf.checkpoints import CheckpointLoadReport, CheckpointMismatchError
from albert_tf.interop.name_table import to_layout
from albert_tf.position_rows import POSITION_TABLE, planned_extension

# Hugging Face and keras-hub always project the embeddings; the original (and we) only when E != H.
# An identity projection is the original's model exactly, so it is written and read as such.
PROJECTION_KERNEL, PROJECTION_BIAS = (name for name, _ in PROJECTION_NAMES)

_MAX_LISTED_NAMES = 20


def _identity_projection(size):
    return {PROJECTION_KERNEL: np.eye(size, dtype=np.float32), PROJECTION_BIAS: np.zeros(size, np.float32)}


def _matches(names, patterns):
    return any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in patterns)


def _described(tf1_name, foreign_name):
    return tf1_name if foreign_name in (None, tf1_name) else f"{tf1_name} ({foreign_name})"


def _listed(entries):
    shown = ", ".join(entries[:_MAX_LISTED_NAMES])
    more = len(entries) - _MAX_LISTED_NAMES
    return shown + (f" ... (+{more} more, see error.report)" if more > 0 else "")


def load_arrays(model, arrays, table, source, caller, file_format, strict=True, allow_missing=(),
                allow_unused=(), ignored=(), init_from_group0=False, extend_positions=None):
    """Assigns foreign `arrays` to `model` and returns a `CheckpointLoadReport`.

    Report names are the original's TF1 names; a foreign name with no TF1 counterpart is listed as
    it is. `allow_missing` / `allow_unused` patterns may match either name. `ignored` (globs of
    foreign names, e.g. tied copies) are listed as skipped. Nothing is assigned unless all checks pass.

    Args:
        model: an `AlbertModel`, `AlbertPretrainingModel` or `AlbertClassifier`.
        arrays: {foreign name: NumPy array}.
        table: the format's `NameTable`.
        source: the file the arrays came from (for messages and `report.path`).
        caller: the public function's name, for messages.
        file_format: what the arrays came from, for the report ("Hugging Face checkpoint").
        init_from_group0: as in `checkpoints.load`: a `group_N` variable the arrays lack is
            read from `group_0` (`report.sources` lists each).
        extend_positions: as in `checkpoints.load`.
    """
    variables = tf1_variables(model)
    projection_size = None if PROJECTION_KERNEL in variables else _embedding_size(variables)
    values, foreign_of, unused, skipped = {}, {}, [], []
    for foreign_name, array in arrays.items():
        translated = table.to_tf1(foreign_name)
        if _matches([foreign_name], ignored):
            skipped.append(foreign_name)
        elif translated is None:
            unused.append((foreign_name, foreign_name))
        elif translated[0] in variables:
            tf1_name, layout = translated
            values[tf1_name] = to_layout(array, layout, tuple(variables[tf1_name].shape))
            foreign_of[tf1_name] = foreign_name
        elif projection_size and translated[0] in (PROJECTION_KERNEL, PROJECTION_BIAS):
            _check_identity(array, translated[0], projection_size, foreign_name, source, caller)
            skipped.append(foreign_name)
        else:
            unused.append((translated[0], foreign_name))
    sources = {}
    for name in variables:
        if init_from_group0 and name not in values and group0_name(name) in values:
            sources[name] = group0_name(name)
            values[name], foreign_of[name] = values[sources[name]], foreign_of[sources[name]]
    missing = [(name, _foreign_name(table, name)) for name in variables if name not in values]
    extended_note = ""
    if POSITION_TABLE in values:
        fill, extended_note = planned_extension(
            extend_positions, values[POSITION_TABLE].shape[0], variables[POSITION_TABLE].shape[0])
        values[POSITION_TABLE] = fill(values[POSITION_TABLE]) if fill else values[POSITION_TABLE]
    report = CheckpointLoadReport(
        path=source,
        format=file_format,
        loaded=tuple(values),
        missing=tuple(_described(*entry) for entry in missing),
        unused=tuple(sorted(_described(*entry) for entry in unused)),
        skipped=tuple(sorted(skipped)),
        sources=sources,
        hub_prefix=False,
        extended_positions=extended_note,
    )
    mismatches = [
        f"{foreign_of[name]} (as {name}: {list(value.shape)}, model: {list(variables[name].shape)})"
        for name, value in values.items()
        if tuple(value.shape) != tuple(variables[name].shape)
    ]
    if mismatches:
        raise ValueError(
            f"{caller}: shape mismatch loading {source} into {type(model).__name__}: "
            f"{'; '.join(mismatches)}. Build the model from the config that ships with the weights."
        )
    if strict:
        _check_strict(model, report, missing, unused, allow_missing, allow_unused, caller)
    for name, value in values.items():
        variables[name].assign(value.astype(variables[name].dtype))
    return report


def _embedding_size(variables):
    return int(variables["bert/embeddings/word_embeddings"].shape[-1])


def _foreign_name(table, tf1_name):
    translated = table.to_foreign(tf1_name)
    return translated[0] if translated else None


def _check_identity(array, tf1_name, size, foreign_name, source, caller):
    expected = _identity_projection(size)[tf1_name]
    if array.shape != expected.shape or not np.array_equal(array, expected):
        raise ValueError(
            f"{caller}: {source} has a learned {foreign_name} although embedding_size == "
            f"hidden_size ({size}); ALBERT has no embedding projection then, so this model cannot "
            "hold it. Only an identity projection (as albert-tf writes) can be read."
        )


def _check_strict(model, report, missing, unused, allow_missing, allow_unused, caller):
    missing = [_described(*entry) for entry in missing if not _matches(entry, allow_missing)]
    unused = [_described(*entry) for entry in unused if not _matches(entry, allow_unused)]
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} model variable(s) missing from the checkpoint: {_listed(missing)} "
            "(allow them with allow_missing=..., e.g. CLASSIFIER_HEAD_NAMES for a new head)"
        )
    if unused:
        problems.append(
            f"{len(unused)} checkpoint weight(s) unused by the model: {_listed(sorted(unused))} "
            "(allow them with allow_unused=..., e.g. PRETRAINING_HEAD_NAMES)"
        )
    if problems:
        raise CheckpointMismatchError(
            f"{caller}: {report.path} does not match {type(model).__name__}: "
            f"{'; '.join(problems)}; or pass strict=False.",
            report,
        )


def export_arrays(model, table, caller, shapes=None):
    """{foreign name: NumPy array} of every weight of `model`, in the format's layouts.

    `shapes` ({foreign name: shape}) gives the target shape of RESHAPE entries. A weight the
    format has no place for is an error: the caller picks the model part the format holds.
    """
    variables = tf1_variables(model)
    arrays = {name: variable.numpy() for name, variable in variables.items()}
    if PROJECTION_KERNEL not in arrays:
        arrays.update(_identity_projection(_embedding_size(variables)))
    exported = {}
    for tf1_name, array in arrays.items():
        translated = table.to_foreign(tf1_name)
        if translated is None:
            raise ValueError(f"{caller}: the format has no place for {tf1_name} of {type(model).__name__}.")
        foreign_name, layout = translated
        exported[foreign_name] = to_layout(array, layout, (shapes or {}).get(foreign_name))
    return exported
