"""Elementwise chains (GELU, residual add + LayerNorm, the scaled masked softmax) as single XLA
kernels, forward and backward.

Why: in TensorFlow's graph executor every elementwise op is its own pass over its tensor, and
the chains around ALBERT's matmuls are long: tanh-GELU on the [tokens, intermediate] activation
is five ops forward and nine backward, LayerNorm about ten. Compiled with XLA, each chain is one
loop that reads its inputs once and writes its outputs once, while the matmuls stay on
TensorFlow's own (oneDNN) kernels, which are faster than XLA's on CPU. Compiling the whole step
with XLA (`--jit_compile`) fuses these chains too, but then pays XLA's slower matmuls.

Each kernel has a hand-written backward, itself one XLA kernel that recomputes what it needs
from the forward's inputs (cheaper than storing intermediates).

Where they apply: in traced code (`tf.function`) whose shapes are static when traced, as in
`run_pretraining.py`'s steps, so that each kernel compiles once (tens of milliseconds). Eager
calls and traces with unknown dimensions (GLUE's dynamically padded batches) use the same math
as plain TensorFlow ops, which need no compile per shape. Off everywhere:
`ALBERT_TF_FUSED_ELEMENTWISE=0` in the environment, or inside `plain_tf_ops()`; the serving
exports trace under it, because TF Serving's model server runs XLA-compiled functions only
with `--xla_cpu_compilation_enabled`.
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


def with_gradient(forward, backward):
    """An op computing `forward(*inputs)`, whose gradient is `backward(*inputs, upstream)`."""

    @tf.custom_gradient
    def op(*inputs):
        def gradient(upstream):
            return backward(*inputs, upstream)

        return forward(*inputs), gradient

    return op
