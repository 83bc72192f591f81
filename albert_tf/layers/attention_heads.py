"""Splitting the hidden size into attention heads and back."""

import tensorflow as tf


def split_heads(states, num_heads):
    """[B, T, H] -> [B, num_heads, T, H / num_heads]."""
    batch, length = tf.shape(states)[0], tf.shape(states)[1]
    heads = tf.reshape(states, [batch, length, num_heads, states.shape[-1] // num_heads])
    return tf.transpose(heads, [0, 2, 1, 3])


def merge_heads(heads):
    """[B, N, T, d] -> [B, T, N * d]."""
    batch, length = tf.shape(heads)[0], tf.shape(heads)[2]
    merged = tf.transpose(heads, [0, 2, 1, 3])
    return tf.reshape(merged, [batch, length, heads.shape[1] * heads.shape[3]])
