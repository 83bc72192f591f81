"""Longer position tables from shorter checkpoints: the rows past the learned ones, filled.

A model with `max_position_embeddings` 4,096 warm-started from a 512-position checkpoint needs
rows 512..4,095. Longformer (Beltagy et al. 2020, section 5) and BigBird (Zaheer et al. 2020,
appendix E.4) copy the learned table over and over: every new row starts as the learned row at the
same offset within its 512-block, so local position differences look as they did in training.
"""

import numpy as np

from albert_tf.checkpoints.names import EMBEDDING_NAMES

POSITION_TABLE = EMBEDDING_NAMES[2][0]  # its TF1 name, whatever the format
EXTEND_MODES = ("repeat",)


def extend_position_table(table, length, mode="repeat"):
    """`table` [P, E] -> [length, E]: the first P rows as they are, row i >= P a copy of row i % P.

    Raises ValueError unless `mode` is one of EXTEND_MODES and P < `length`.
    """
    table = np.asarray(table)
    if mode not in EXTEND_MODES:
        raise ValueError(f"extend_positions: unknown mode {mode!r}; allowed: {list(EXTEND_MODES)}.")
    if table.ndim != 2 or not 0 < table.shape[0] < length:
        raise ValueError(
            f"extend_positions: the checkpoint's position table {list(table.shape)} must have fewer rows "
            f"than the model's max_position_embeddings ({length})."
        )
    return table[np.arange(length) % table.shape[0]]


def planned_extension(mode, stored_rows, model_rows):
    """(function filling a stored table to the model's rows, the load report's note), or
    (None, "") when `mode` is None or the stored table is not shorter."""
    if mode is None or stored_rows >= model_rows:
        return None, ""
    return (lambda table: extend_position_table(table, model_rows, mode)), f"{stored_rows} -> {model_rows} ({mode})"
