"""Splitting the hidden size into attention heads and back."""

from keras import ops


def split_heads(states, num_heads):
    """[B, T, H] -> [B, num_heads, T, H / num_heads]."""
    batch, length = ops.shape(states)[0], ops.shape(states)[1]
    heads = ops.reshape(states, (batch, length, num_heads, states.shape[-1] // num_heads))
    return ops.transpose(heads, (0, 2, 1, 3))


def merge_heads(heads):
    """[B, N, T, d] -> [B, T, N * d]."""
    batch, num_heads, length, head_size = ops.shape(heads)
    merged = ops.transpose(heads, (0, 2, 1, 3))
    # The static width where the graph knows it (the next Dense wants it); a traced graph may not.
    static = heads.shape[1] is not None and heads.shape[3] is not None
    return ops.reshape(merged, (batch, length, heads.shape[1] * heads.shape[3] if static else num_heads * head_size))
