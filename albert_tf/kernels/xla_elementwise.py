"""Elementwise chains (GELU, residual add + LayerNorm, the scaled masked softmax) as single XLA
kernels, forward and backward: the building blocks of the "cpu" kernel set.

Why: in TensorFlow's graph executor every elementwise op is its own pass over its tensor, and
the chains around ALBERT's matmuls are long: tanh-GELU on the [tokens, intermediate] activation
is five ops forward and nine backward, LayerNorm about ten. Compiled with XLA, each chain is one
loop that reads its inputs once and writes its outputs once, while the matmuls stay on
TensorFlow's own (oneDNN) kernels, which are faster than XLA's on CPU. Compiling the whole step
with XLA (`--jit_compile`) fuses these chains too, but then pays XLA's slower matmuls.

Each kernel has a hand-written backward, itself one XLA kernel that recomputes what it needs
from the forward's inputs (cheaper than storing intermediates), helped by a few numbers per row
that the forward keeps (LayerNorm's mean and inverse std, the softmax's max and sum): with them
the backward needs no reductions but its own.

A kernel applies in traced code (`tf.function`) whose shapes are static when traced, as in
`run_pretraining.py`'s steps, so that each compiles once (tens of milliseconds). Eager calls and
traces with unknown dimensions (GLUE's dynamically padded batches) use the same math as plain
TensorFlow ops, which need no compile per shape.
"""

import tensorflow as tf


def applies(tensor):
    """Whether an op on `tensor` uses its XLA kernel: traced, and of a static shape."""
    return not tf.executing_eagerly() and tf.TensorShape(tensor.shape).is_fully_defined()


def row_sums(value):
    """`value` [..., n] summed over its last axis (kept as size 1), inside an XLA kernel.

    As a matrix-vector product with a ones vector: XLA's CPU backend runs a dot as one kernel
    that reads its operand once, in parallel, while it splits a reduction from the elementwise
    ops that produce its input, writing that input out and reading it back. Same sums, in
    another order. (Not for column sums: the transposed product strides across rows, many times
    slower than `reduce_sum` on data not in cache.)
    """
    shape = tf.shape(value)
    sums = tf.linalg.matvec(tf.reshape(value, [-1, shape[-1]]), tf.ones([shape[-1]], value.dtype))
    return tf.reshape(sums, tf.concat([shape[:-1], [1]], 0))


def xla_kernel(function):
    """`function` compiled by XLA as one kernel (retraced only when ranks or dtypes change)."""
    return tf.function(function, jit_compile=True, autograph=False, reduce_retracing=True)


def with_gradient(forward, backward, saved=0):
    """An op computing `forward(*inputs)`, whose gradient is `backward(*inputs, *kept, *upstreams)`.

    `forward`'s last `saved` results are not outputs of the op: they are `kept` for `backward`
    only (row statistics, cheaper to keep than to recompute). One upstream per output.
    """

    @tf.custom_gradient
    def op(*inputs):
        results = forward(*inputs)
        if saved:
            results, kept = results[:-saved], results[-saved:]
            results = results[0] if len(results) == 1 else results
        else:
            kept = ()

        def gradient(*upstreams):
            return backward(*inputs, *kept, *upstreams)

        return results, gradient

    return op
