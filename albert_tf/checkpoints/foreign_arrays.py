"""Foreign arrays (Hugging Face, keras-hub) seen as TF1-named weights, and our weights out as foreign arrays.

A format's reader produces {foreign name: NumPy array}; `stored_from_arrays` renames them with the
format's `NameTable` to the original's TF1 names and into the TF1 layouts, so that `loading.load`
treats them as any checkpoint. `export_arrays` goes the other way for the writers.
"""

import fnmatch

import numpy as np

from albert_tf.checkpoints.names import PROJECTION_BIAS, PROJECTION_KERNEL, WORD_EMBEDDINGS, tf1_variables
from albert_tf.checkpoints.name_table import to_layout
from albert_tf.checkpoints.stored import StoredWeights


def _identity_projection(size):
    return {PROJECTION_KERNEL: np.eye(size, dtype=np.float32), PROJECTION_BIAS: np.zeros(size, np.float32)}


def _embedding_size(variables):
    return int(variables[WORD_EMBEDDINGS].shape[-1])


def stored_from_arrays(model, arrays, table, source, file_format, ignored=()):
    """A `StoredWeights` of `arrays` ({foreign name: NumPy array}) under TF1 names, for `model`.

    A foreign name with no TF1 counterpart keeps its name (it will be unused); `ignored` (globs of
    foreign names, e.g. tied copies) are skipped. HF and keras-hub always project the embeddings,
    the original (and we) only when E != H: an identity projection is skipped for a model without
    one, a learned one is an error.
    """
    variables = tf1_variables(model)
    projection_size = None if PROJECTION_KERNEL in variables else _embedding_size(variables)
    values, foreign_names, skipped = {}, {}, []
    for foreign_name, array in arrays.items():
        translated = table.to_tf1(foreign_name)
        if any(fnmatch.fnmatchcase(foreign_name, pattern) for pattern in ignored):
            skipped.append(foreign_name)
            continue
        _check_weight(array, foreign_name, source)
        if translated is None:
            values[foreign_name] = array
        elif projection_size and translated[0] in (PROJECTION_KERNEL, PROJECTION_BIAS):
            _check_identity(array, translated[0], projection_size, foreign_name, source)
            skipped.append(foreign_name)
        else:
            tf1_name, layout = translated
            target = variables.get(tf1_name)
            values[tf1_name] = to_layout(array, layout, None if target is None else tuple(target.shape))
            foreign_names[tf1_name] = foreign_name
    for name in variables:
        if name not in foreign_names:
            translated = table.to_foreign(name)
            if translated is not None:
                foreign_names[name] = translated[0]
    return StoredWeights(
        path=source,
        format=file_format,
        shapes={name: list(value.shape) for name, value in values.items()},
        read=values.__getitem__,
        skipped=tuple(sorted(skipped)),
        foreign_names=foreign_names,
    )


def _check_weight(array, foreign_name, source):
    """A weight is a finite floating-point array of rank >= 1; anything else is refused, not cast."""
    if not hasattr(array, "dtype") or not hasattr(array, "ndim"):
        raise ValueError(f"{source}: {foreign_name} is a {type(array).__name__}, not a tensor.")
    if array.ndim == 0:
        raise ValueError(f"{source}: {foreign_name} is a 0-d tensor (a scalar); ALBERT's weights are arrays.")
    if not (np.issubdtype(array.dtype, np.floating) or array.dtype.name == "bfloat16"):
        raise ValueError(f"{source}: {foreign_name} has dtype {array.dtype}; expected floating-point weights "
                         "(not cast: integer weights are not a trained model's).")
    if not np.isfinite(array.astype(np.float32)).all():
        raise ValueError(f"{source}: {foreign_name} holds NaN or infinite values.")


def _check_identity(array, tf1_name, size, foreign_name, source):
    expected = _identity_projection(size)[tf1_name]
    if array.shape != expected.shape or not np.array_equal(array, expected):
        raise ValueError(
            f"{source} has a learned {foreign_name} although embedding_size == hidden_size ({size}); "
            "ALBERT has no embedding projection then, so this model cannot hold it. Only an identity "
            "projection (as albert-tf writes) can be read."
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
