"""The kernel interface, implemented as ALBERT's plain math: the model's reference path.

The layers compute through a small set of operations (`dense`, `project_heads`,
`attention_probabilities` and `attend`, `dropout`, `add_and_norm`, `last_block_rows`, within a
`forward_pass`). This class is their definition, in `keras.ops` (every Keras backend), and what a
reader checks against the paper; the layers compute with it unless given another. Another kernel
set in `albert_tf.kernels` may subclass it to compute the same math faster on one kind of
hardware; the model picks one by its `kernels` argument and hands it to its layers.
"""

import contextlib

from keras import ops

from albert_tf.layers.activations import get_activation
from albert_tf.layers.attention_heads import split_heads


class ReferenceKernels:
    """ALBERT's math in plain ops. Mixed precision: matmuls in the compute dtype; the softmax,
    the residual add and LayerNorm in float32."""

    name = "reference"

    def forward_pass(self, recompute=False):
        """Encloses one forward pass of the encoder: a kernel set may share work among its blocks
        within it. `recompute`: the blocks run again one by one in the backward pass
        (`keras.remat`), on JAX each in a trace of its own, which cannot use a tensor another's
        computed."""
        return contextlib.nullcontext()

    def dense(self, layer, inputs, activation="linear"):
        """`activation(layer(inputs))` for a Keras `Dense` layer without an activation of its own."""
        return get_activation(activation)(layer(inputs))

    def project_heads(self, layers, inputs, num_heads):
        """Each Dense of `layers` ([H, H]) applied to `inputs` [B, T, H], split into heads
        [B, num_heads, T, H / num_heads]: the query, key and value projections."""
        return [split_heads(layer(inputs), num_heads) for layer in layers]

    @staticmethod
    def attention_probabilities(query, key, bias, scale):
        """softmax(query @ key^T * scale + bias) over the keys, in float32, returned in the
        query's dtype: [B, N, Q, d], [B, N, T, d], bias [B, 1, 1, T] -> [B, N, Q, T]."""
        scores = ops.matmul(query, ops.swapaxes(key, -1, -2))
        probabilities = ops.softmax(ops.cast(scores, "float32") * scale + bias, axis=-1)
        return ops.cast(probabilities, query.dtype)

    def attend(self, query, key, value, bias, scale, dropout, training):
        """Each query's average of `value` [B, N, T, d] weighted by its attention probabilities,
        those after `dropout` (a Keras `Dropout`): [B, N, Q, d]."""
        probabilities = dropout(self.attention_probabilities(query, key, bias, scale), training=training)
        return ops.matmul(probabilities, value)

    def dropout(self, layer, inputs, training):
        """`layer` (a Keras `Dropout`) applied to `inputs`: the inputs themselves unless training at
        a rate above 0."""
        return layer(inputs, training=training)

    def last_block_rows(self, last_output, positions, run_again, training):
        """The encoder's last block at `positions` [B, R]: `run_again()`, the block run again with
        queries at those rows alone, not rows of `last_output` [B, T, H] (the full last block), so
        that a graph reading only them (a training step, a classifier) prunes the full block."""
        return run_again()

    def add_and_norm(self, norm, residual, output):
        """`norm(residual + output)`, the post-LN residual connection, in float32 (the residual
        stream between sub-layers stays float32 under mixed precision)."""
        return norm(ops.cast(residual, "float32") + ops.cast(output, "float32"))
