"""The "cpu" kernel set: the reference math, arranged for TensorFlow's CPU executor.

- GELU, the residual add + LayerNorm and the scaled masked softmax are each one XLA kernel
  forward and one backward (`xla_elementwise`), where shapes are static in a traced step.
- Every Dense runs as one 2-D MatMul + BiasAdd (`dense_2d`), which TF's remapper fuses.
- Query, key and value are one matmul against their kernels side by side.
- Under mixed precision each weight is cast to the compute dtype once per forward pass
  (`WeightCasts`), not once per layer that reuses it.
Measured against keras-hub and the reference set in `bench/bench_model.py`.
"""

import tensorflow as tf

from albert_tf.kernels import xla_elementwise
from albert_tf.kernels.add_and_norm import add_and_norm
from albert_tf.kernels.dense_2d import dense_2d, stacked_dense_2d
from albert_tf.kernels.gelu import gelu
from albert_tf.kernels.masked_softmax import masked_softmax
from albert_tf.kernels.pass_state import PassState
from albert_tf.kernels.weight_casts import WeightCasts
from albert_tf.layers.activations import get_activation
from albert_tf.layers.reference_kernels import ReferenceKernels


class CpuKernels(ReferenceKernels):
    name = "cpu"

    def __init__(self):
        self._casts = PassState()

    def forward_pass(self, recompute=False):
        return self._casts.holding(self.pass_weight_casts())

    def casts(self):
        """The current pass's `WeightCasts` (a fresh one outside a pass)."""
        return self._casts.current() or self.pass_weight_casts()

    def pass_weight_casts(self):
        """What shares the weights' casts within one pass."""
        return WeightCasts()

    def activation(self, name):
        return gelu if name == "gelu" else get_activation(name)

    def dense(self, layer, inputs, activation="linear"):
        return dense_2d(layer, inputs, self.casts(), activation=self.activation(activation))

    def project_heads(self, layers, inputs, num_heads):
        # One matmul against the kernels side by side, then one transpose into heads.
        shape = tf.shape(inputs)
        joined = stacked_dense_2d(layers, inputs, self.casts())
        joined = tf.reshape(joined, [shape[0], shape[1], len(layers), num_heads, layers[0].units // num_heads])
        return tf.unstack(tf.transpose(joined, [2, 0, 3, 1, 4]), num=len(layers))

    def attention_probabilities(self, query, key, bias, scale):
        if all(xla_elementwise.applies(t) for t in (query, key, bias)) and bias.shape.rank == query.shape.rank:
            return masked_softmax(scale)(tf.matmul(query, key, transpose_b=True), bias)
        return super().attention_probabilities(query, key, bias, scale)

    def add_and_norm(self, norm, residual, output):
        if xla_elementwise.applies(output):
            return add_and_norm(norm, residual, output)
        return super().add_and_norm(norm, residual, output)
