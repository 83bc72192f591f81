"""The "eager" kernel set: the reference math in fewer, larger matmuls, for a backend that runs
the model op by op (Keras on PyTorch, which does not compile it).

- Query, key and value are one matmul against their kernels side by side, and one per weight
  gradient. Eagerly each matmul is its own call, and on two threads each call waits for both; on
  a loaded machine that wait, not the arithmetic, sets the time (docs/benchmarks.md, "PyTorch, op
  by op"). The kernels are joined at every call (a copy of 3 H x H floats): a join kept for the
  whole pass would cross `keras.remat`'s boundaries, which JAX refuses.

In `keras.ops` like the reference, so it runs on every backend.
"""

from keras import ops

from albert_tf.layers.attention_heads import split_heads
from albert_tf.layers.reference_kernels import ReferenceKernels


class EagerKernels(ReferenceKernels):
    name = "eager"

    def project_heads(self, layers, inputs, num_heads):
        dtype = layers[0].compute_dtype
        kernel = ops.cast(ops.concatenate([layer.kernel for layer in layers], axis=-1), dtype)
        projected = ops.matmul(ops.cast(inputs, dtype), kernel)
        if layers[0].bias is not None:
            projected = projected + ops.cast(ops.concatenate([layer.bias for layer in layers], axis=-1), dtype)
        return [split_heads(part, num_heads) for part in ops.split(projected, len(layers), axis=-1)]
