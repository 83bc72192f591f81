"""The "eager" kernel set: the reference math in fewer, larger calls, for a backend that runs the
model op by op (Keras on PyTorch, which does not compile it). Each call is its own dispatch, and
on two threads each waits for both; on a loaded machine that wait, not the arithmetic, sets the
time (docs/benchmarks.md, "PyTorch, op by op").

- Query, key and value are one matmul against their kernels side by side, and one per weight
  gradient. The kernels (and biases) are joined once per forward pass, in their own dtype, and
  reused by every block that shares them (cast to the compute dtype at each use, as the
  reference's layers cast their kernels). With `recompute` they are joined at every call: a
  join kept for the pass would cross `keras.remat`'s boundaries, which JAX refuses.
- Attention is the backend's fused `dot_product_attention` (PyTorch's
  `scaled_dot_product_attention`), the same softmax(QK^T * scale + bias) V in one call, where
  dropout on the probabilities is inactive (inference, or a rate of 0): the fused op cannot take
  Keras' dropout, so training with it takes the reference's path. Under mixed precision the fused
  softmax runs in the compute dtype, the reference's in float32.
- Dense layers and LayerNorms are computed from their variables, and inactive dropout skipped,
  not called as Keras layers: each Keras layer call costs Python time beyond its ops, and these
  were 84 of an albert-base forward's 116 (docs/benchmarks.md). The ops are the layers' own
  (`Dense`'s matmul and bias add in its compute dtype, `ops.layer_normalization`).
- The last block's rows (`last_block_rows`) come from the full last block in inference: op by op
  nothing is pruned, the full block is computed anyway, so running it again at the rows is waste.
  Training runs them again: that block's forward and backward (keys and values over every row,
  the rest at the R rows) cost less than the full block's backward while R is a small part of T.

In `keras.ops` like the reference, so it runs on every backend.
"""

from keras import ops

from albert_tf.kernels.pass_state import PassState
from albert_tf.layers.activations import get_activation
from albert_tf.layers.attention_heads import split_heads
from albert_tf.layers.reference_kernels import ReferenceKernels
from albert_tf.layers.rows import gather_rows

# [B, N, T, d] (ours) <-> [B, T, N, d] (`ops.dot_product_attention`'s): its own inverse.
_HEADS_AXIS_SWAP = (0, 2, 1, 3)


class EagerKernels(ReferenceKernels):
    name = "eager"

    def __init__(self):
        # {variables' ids: (variables, their join)} of the current pass; None: join at each call.
        self._joins = PassState()

    def forward_pass(self, recompute=False):
        return self._joins.holding(None if recompute else {})

    def dense(self, layer, inputs, activation="linear"):
        return get_activation(activation)(_affine(inputs, layer.kernel, layer.bias, layer.compute_dtype))

    def project_heads(self, layers, inputs, num_heads):
        kernel = self._side_by_side([layer.kernel for layer in layers])
        bias = None if layers[0].bias is None else self._side_by_side([layer.bias for layer in layers])
        projected = _affine(inputs, kernel, bias, layers[0].compute_dtype)
        return [split_heads(part, num_heads) for part in ops.split(projected, len(layers), axis=-1)]

    def _side_by_side(self, variables):
        """`variables` joined along their last axis, once per pass where the pass keeps joins."""
        if len(variables) == 1:
            return variables[0]
        joins = self._joins.current()
        if joins is None:
            return ops.concatenate(variables, axis=-1)
        key = tuple(id(variable) for variable in variables)
        if key not in joins:
            # The variables are kept with their join so that their ids cannot be reused meanwhile.
            joins[key] = (variables, ops.concatenate(variables, axis=-1))
        return joins[key][1]

    def attend(self, query, key, value, bias, scale, dropout, training):
        if training and dropout.rate > 0:
            return super().attend(query, key, value, bias, scale, dropout, training)
        query, key, value = (ops.transpose(heads, _HEADS_AXIS_SWAP) for heads in (query, key, value))
        context = ops.dot_product_attention(query, key, value, bias=ops.cast(bias, query.dtype), scale=scale)
        return ops.transpose(context, _HEADS_AXIS_SWAP)

    def dropout(self, layer, inputs, training):
        return layer(inputs, training=training) if training and layer.rate > 0 else inputs

    def add_and_norm(self, norm, residual, output):
        summed = ops.cast(residual, "float32") + ops.cast(output, "float32")
        return ops.layer_normalization(summed, norm.gamma, norm.beta, axis=norm.axis, epsilon=norm.epsilon)

    def last_block_rows(self, last_output, positions, run_again, training):
        return run_again() if training else gather_rows(last_output, positions)


def _affine(inputs, kernel, bias, dtype):
    """inputs @ kernel + bias in `dtype`, as a Keras `Dense` computes in its compute dtype."""
    outputs = ops.matmul(ops.cast(inputs, dtype), ops.cast(kernel, dtype))
    return outputs if bias is None else outputs + ops.cast(bias, dtype)
