"""Reading some rows of each sequence: the masked positions, [CLS], a SQuAD start."""

from keras import ops


def gather_rows(states, positions):
    """`states` [B, T, ...] at `positions` int [B, P] -> [B, P, ...]: row `positions[b, p]` of
    sequence b. One gather on the [B * T, ...] rows (a batched gather in every backend's plain
    ops, which TFLite's builtins run too)."""
    shape = ops.shape(states)
    batch, length = shape[0], shape[1]
    flat = ops.reshape(states, (-1,) + tuple(states.shape[2:]))
    offsets = ops.expand_dims(ops.arange(batch, dtype="int32") * length, 1)
    return ops.take(flat, ops.cast(positions, "int32") + offsets, axis=0)
