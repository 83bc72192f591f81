"""Elementwise chains (GELU, residual add + LayerNorm, the scaled masked softmax) as single XLA
kernels, forward and backward.

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

Inference on CPUs is different: there TensorFlow's oneDNN graph rewrites fuse a matmul's
elementwise epilogue (bias, scale, mask, GELU) into the matmul call itself, and oneDNN's softmax
is one pass computed in float32; a separate XLA kernel would re-read what the matmul just
wrote. So graphs that take no gradient, traced for a CPU with oneDNN on (`onednn_inference`),
write those chains in the forms the rewrites recognise (`gelu_for_inference`,
`attention_probabilities(..., inference=True)`); the add + LayerNorm kernel stays, oneDNN has no
rewrite for it.

Where the XLA kernels apply: in traced code (`tf.function`) whose shapes are static when traced, as in
`run_pretraining.py`'s steps, so that each kernel compiles once (tens of milliseconds). Eager
calls and traces with unknown dimensions (GLUE's dynamically padded batches) use the same math
as plain TensorFlow ops, which need no compile per shape. Off everywhere:
`ALBERT_TF_FUSED_ELEMENTWISE=0` in the environment, or inside `plain_tf_ops()` (both also turn
off the oneDNN forms); the serving exports trace under it, because TF Serving's model server
runs XLA-compiled functions only with `--xla_cpu_compilation_enabled`, and because the
machine that serves them may not have oneDNN.
"""

import contextlib
import os

import tensorflow as tf

ENV_VAR = "ALBERT_TF_FUSED_ELEMENTWISE"

_plain_depth = 0


def enabled():
    """Whether the XLA kernels are allowed at all (the environment and `plain_tf_ops()`)."""
    return _plain_depth == 0 and os.environ.get(ENV_VAR, "1") != "0"


def applies(tensor):
    """Whether an op on `tensor` uses its XLA kernel: allowed, traced, and of a static shape."""
    return enabled() and not tf.executing_eagerly() and tf.TensorShape(tensor.shape).is_fully_defined()


def onednn_inference(dtype):
    """Whether inference ops on `dtype` traced now will run on TF's oneDNN CPU kernels and their
    graph rewrites: allowed, traced, outside any XLA-compiled function, oneDNN on (TF's own test:
    x86 builds, unless `TF_ENABLE_ONEDNN_OPTS=0`), `dtype` float32 or a bfloat16 that oneDNN runs
    on this CPU (AVX-512; float16 keeps the float32 XLA kernels), and no accelerator visible."""
    return (
        enabled()
        and not tf.executing_eagerly()
        and tf.__internal__.get_enclosing_xla_context() is None
        and tf.as_dtype(dtype) in (tf.float32, tf.bfloat16)
        and _onednn_runs(tf.as_dtype(dtype))
        and cpu_only()
    )


def cpu_only():
    """Whether no accelerator is visible, so that traced ops run on the CPU."""
    return all(device.device_type == "CPU" for device in tf.config.list_logical_devices())


def row_sums(value):
    """`value` [..., n] summed over its last axis (kept as size 1), inside an XLA kernel.

    On CPUs as a matrix-vector product with a ones vector: XLA's CPU backend runs a dot as one
    kernel that reads its operand once, in parallel, while it splits a reduction from the
    elementwise ops that produce its input, writing that input out and reading it back. Same
    sums, in another order. Elsewhere `reduce_sum`. (Not for column sums: the transposed
    product strides across rows, many times slower than `reduce_sum` on data not in cache.)
    """
    if not cpu_only():
        return tf.reduce_sum(value, axis=-1, keepdims=True)
    shape = tf.shape(value)
    sums = tf.linalg.matvec(tf.reshape(value, [-1, shape[-1]]), tf.ones([shape[-1]], value.dtype))
    return tf.reshape(sums, tf.concat([shape[:-1], [1]], 0))


def _onednn_runs(dtype):
    try:  # not in TF's public API; without it, assume no oneDNN (the portable forms are used)
        from tensorflow.python.util import _pywrap_util_port, _pywrap_utils

        return bool(_pywrap_util_port.IsMklEnabled()) and bool(_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(dtype))
    except (ImportError, AttributeError):
        return False


@contextlib.contextmanager
def plain_tf_ops():
    """Layers traced inside use plain TensorFlow ops: for graphs that must run without XLA."""
    global _plain_depth
    _plain_depth += 1
    try:
        yield
    finally:
        _plain_depth -= 1


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
