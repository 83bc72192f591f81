"""A foreign format's names <-> the original's TF1 names, taken from one column of `names`' table.

A table holds fixed entries (embeddings, pooler, heads) and per-block entries under a scope with
the block's owner (group) and inner-group indices, mirroring `names.BLOCK_SCOPE`. Each entry names
a layout: how the foreign array becomes the TF1 one and back.
"""

import dataclasses
import re

import numpy as np

from albert_tf.checkpoints.names import (ATTENTION_NAMES, BLOCK_SCOPE, EMBEDDING_NAMES, FFN_NAMES, HEAD_TABLES,
                                         LAYOUTS, POOLER_NAMES, PROJECTION_NAMES, RESHAPE, TRANSPOSE)

HUGGING_FACE_COLUMN = 2
KERAS_HUB_COLUMN = 3


def to_layout(array, layout, shape):
    """`array` in the other layout, as a contiguous array of `shape` (None: whatever it gives)."""
    if layout == TRANSPOSE:
        array = array.T
    elif layout == RESHAPE and shape is not None and array.size == int(np.prod(shape)):
        array = array.reshape(shape)
    return np.ascontiguousarray(array)


def _scope_pattern(scope):
    parts = re.split(r"(\{owner\}|\{inner\})", scope)
    groups = {"{owner}": r"(?P<owner>\d+)", "{inner}": r"(?P<inner>\d+)"}
    return "".join(groups.get(part, re.escape(part)) for part in parts)


def _block_regex(scope, suffixes):
    alternatives = "|".join(re.escape(suffix) for suffix in sorted(suffixes, key=len, reverse=True))
    return re.compile(f"{_scope_pattern(scope)}(?P<suffix>{alternatives})")


def _column(rows, column):
    return tuple((row[column][0], row[0], row[column][1]) for row in rows if row[column] is not None)


@dataclasses.dataclass(frozen=True)
class NameTable:
    """Foreign <-> TF1 names.

    Attributes:
        fixed: (foreign name, TF1 name, layout) entries.
        block_scope: the foreign scope of one block, with `{owner}` and `{inner}`.
        block: (foreign suffix, TF1 suffix relative to BLOCK_SCOPE, layout) entries.
    """

    fixed: tuple
    block_scope: str
    block: tuple

    @classmethod
    def from_column(cls, column, block_scope):
        """The table of the format whose names are `column` of the rows in `names`."""
        fixed_rows = EMBEDDING_NAMES + PROJECTION_NAMES + POOLER_NAMES + sum(HEAD_TABLES.values(), ())
        return cls(_column(fixed_rows, column), block_scope, _column(ATTENTION_NAMES + FFN_NAMES, column))

    def __post_init__(self):
        for entry in self.fixed + self.block:
            if entry[2] not in LAYOUTS:
                raise ValueError(f"NameTable: unknown layout {entry[2]!r} in {entry}.")

    def to_tf1(self, foreign_name):
        """(TF1 name, layout) of a foreign name, or None if the table has no such name."""
        return _translate(foreign_name, self.fixed, self.block, self.block_scope, BLOCK_SCOPE)

    def to_foreign(self, tf1_name):
        """(foreign name, layout) of a TF1 name, or None if the format has no such weight."""
        flipped_fixed = tuple((tf1, foreign, layout) for foreign, tf1, layout in self.fixed)
        flipped_block = tuple((tf1, foreign, layout) for foreign, tf1, layout in self.block)
        return _translate(tf1_name, flipped_fixed, flipped_block, BLOCK_SCOPE, self.block_scope)


def _translate(name, fixed, block, source_scope, target_scope):
    for source, target, layout in fixed:
        if name == source:
            return target, layout
    match = _block_regex(source_scope, [entry[0] for entry in block]).fullmatch(name)
    if not match:
        return None
    for source, target, layout in block:
        if match["suffix"] == source:
            return target_scope.format(owner=match["owner"], inner=match["inner"]) + target, layout
    return None
