"""Splitting the hidden size into attention heads and back."""

from keras import ops


def split_heads(states, num_heads):
    """[B, T, H] -> [B, num_heads, T, H / num_heads]."""
    batch, length = ops.shape(states)[0], ops.shape(states)[1]
    heads = ops.reshape(states, (batch, length, num_heads, states.shape[-1] // num_heads))
    return ops.transpose(heads, (0, 2, 1, 3))


def merge_heads(heads):
    """[B, N, T, d] -> [B, T, N * d]."""
    batch, length = ops.shape(heads)[0], ops.shape(heads)[2]
    merged = ops.transpose(heads, (0, 2, 1, 3))
    return ops.reshape(merged, (batch, length, heads.shape[1] * heads.shape[3]))
