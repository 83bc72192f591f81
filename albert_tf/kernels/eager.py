"""The "eager" kernel set: the reference math in fewer, larger matmuls, for a backend that runs
the model op by op (Keras on PyTorch, which does not compile it).

- Query, key and value are one matmul against their kernels side by side (and one per weight
  gradient), joined once per forward pass: ALBERT's layers share them, so one join serves every
  layer. Eagerly each matmul is its own call, and on two threads each call waits for both; on a
  loaded machine that wait, not the arithmetic, sets the time (docs/benchmarks.md, "PyTorch, op by op").

In `keras.ops` like the reference, so it runs on every backend.
"""

import contextlib
import threading

from keras import ops

from albert_tf.layers.attention_heads import split_heads
from albert_tf.layers.reference_kernels import ReferenceKernels


class EagerKernels(ReferenceKernels):
    name = "eager"

    def __init__(self):
        # The joined weights of the forward pass under way; per thread, as the "cpu" set's casts.
        self._current = threading.local()

    @contextlib.contextmanager
    def forward_pass(self):
        outer = getattr(self._current, "joined", None)
        self._current.joined = {}
        try:
            yield
        finally:
            self._current.joined = outer

    def project_heads(self, layers, inputs, num_heads):
        kernel, bias = self._joined(layers)
        projected = ops.matmul(ops.cast(inputs, kernel.dtype), kernel)
        if bias is not None:
            projected = projected + bias
        return [split_heads(part, num_heads) for part in ops.split(projected, len(layers), axis=-1)]

    def _joined(self, layers):
        """The Dense `layers`' kernels (and biases) side by side in their compute dtype, made once
        per forward pass (outside one, for this call only)."""
        joined = getattr(self._current, "joined", None)
        joined = {} if joined is None else joined
        key = tuple(id(layer) for layer in layers)
        if key not in joined:
            dtype = layers[0].compute_dtype
            kernel = ops.cast(ops.concatenate([layer.kernel for layer in layers], axis=-1), dtype)
            bias = None if layers[0].bias is None else ops.cast(
                ops.concatenate([layer.bias for layer in layers], axis=-1), dtype)
            # The layers are kept with their join so that their ids cannot be reused meanwhile.
            joined[key] = (layers, kernel, bias)
        return joined[key][1:]
