"""The "cpu_inference" kernel set: "cpu", with inference forms that oneDNN fuses.

On CPUs TensorFlow's oneDNN graph rewrites fuse a matmul's elementwise epilogue (bias, scale,
mask, GELU) into the matmul call itself, and oneDNN's softmax is one pass computed in float32;
a separate XLA kernel would re-read what the matmul just wrote. So, in traced graphs whose
dtype oneDNN runs on this CPU (float32; bfloat16 with AVX-512), this set writes those chains in
the forms the rewrites recognise. For graphs that take no gradient: the forms are differentiable
but slow to differentiate. Elsewhere it computes as "cpu"; the add + LayerNorm kernel stays (oneDNN
has no rewrite for it).
"""

import tensorflow as tf

from albert_tf.kernels.cpu import CpuKernels
from albert_tf.kernels.dense_2d import dense_2d


def onednn_runs(dtype):
    """Whether TF's oneDNN kernels (and so its rewrites) run `dtype` on this CPU."""
    try:  # not in TF's public API; without it, assume no oneDNN (the "cpu" forms are used)
        from tensorflow.python.util import _pywrap_util_port, _pywrap_utils

        return bool(_pywrap_util_port.IsMklEnabled()) and bool(_pywrap_utils.IsDataTypeSupportedByOneDNNOnThisCPU(dtype))
    except (ImportError, AttributeError):
        return False


def onednn_dtypes():
    """The dtypes of the forms (float32, bfloat16) that oneDNN runs on this CPU."""
    return tuple(dtype for dtype in (tf.float32, tf.bfloat16) if onednn_runs(dtype))


def onednn_forms_apply(dtype, dtypes=None):
    """Traced, outside any XLA-compiled function, and `dtype` one of `dtypes` (default:
    `onednn_dtypes()`)."""
    return (
        not tf.executing_eagerly()
        and tf.__internal__.get_enclosing_xla_context() is None
        and tf.as_dtype(dtype) in (onednn_dtypes() if dtypes is None else dtypes)
    )


def per_head_projections(layers, inputs, num_heads, casts):
    """Each head's projection as its own GEMM of a broadcast batch matmul, [1, B, 1, T, H] @
    [k, 1, N, H, d] + bias, whose output is already head-major and split along its first axis,
    which TF does without a copy: no transpose."""
    kernel, bias = _per_head_weights(layers, num_heads, layers[0].compute_dtype, casts)
    shape = tf.shape(inputs)  # an explicit rank-5 shape lets the rewrites see the ranks
    inputs = tf.reshape(tf.cast(inputs, kernel.dtype), [1, shape[0], 1, shape[1], inputs.shape[-1]])
    return tf.unstack(tf.matmul(inputs, kernel) + bias, num=len(layers))


def _per_head_weights(layers, num_heads, dtype, casts):
    """The k kernels [H, H] as one [k, 1, N, H, d] and the biases as one [k, 1, N, 1, d], in
    `dtype`, made once per pass (`casts`)."""
    size = layers[0].units // num_heads

    def kernel(values):
        per_head = tf.reshape(tf.stack(values), [len(values), 1, -1, num_heads, size])
        return tf.cast(tf.transpose(per_head, [0, 1, 3, 2, 4]), dtype)

    def bias(values):
        return tf.cast(tf.reshape(tf.stack(values), [len(values), 1, num_heads, 1, size]), dtype)

    return (casts.derived(("per_head_kernel", dtype), [layer.kernel for layer in layers], kernel),
            casts.derived(("per_head_bias", dtype), [layer.bias for layer in layers], bias))


def fusable_attention_probabilities(query, key, bias, scale):
    """The original's op order, matmul, scale, add the mask, softmax, all in the query's dtype:
    the oneDNN rewrites make the first three one fused batch matmul (scale and mask applied to
    the float32 accumulator), and oneDNN's softmax computes in float32 whatever its dtype
    (tested). Under bfloat16 the mask adder rounds to -9984, which changes nothing unless every
    key of a row is masked."""
    scores = tf.matmul(query, key, transpose_b=True) * tf.cast(scale, query.dtype)
    return tf.nn.softmax(scores + tf.cast(bias, query.dtype), axis=-1)


class CpuInferenceKernels(CpuKernels):
    name = "cpu_inference"

    def __init__(self):
        super().__init__()
        self.onednn_dtypes = onednn_dtypes()  # fixed for the process: asked once

    def forms_apply(self, dtype):
        return onednn_forms_apply(dtype, self.onednn_dtypes)

    def dense(self, layer, inputs, activation="linear"):
        # tf.nn.gelu(approximate=True) is the original's formula and the pattern that the
        # remapper folds into the MatMul + BiasAdd before it: the [tokens, intermediate]
        # activation is written once and never re-read.
        if activation == "gelu" and self.forms_apply(layer.compute_dtype):
            return dense_2d(layer, inputs, self.casts(), activation=lambda x: tf.nn.gelu(x, approximate=True))
        return super().dense(layer, inputs, activation)

    def project_heads(self, layers, inputs, num_heads):
        if not self.forms_apply(layers[0].compute_dtype):
            return super().project_heads(layers, inputs, num_heads)
        return per_head_projections(layers, inputs, num_heads, self.casts())

    def attention_probabilities(self, query, key, bias, scale):
        if not self.forms_apply(query.dtype):
            return super().attention_probabilities(query, key, bias, scale)
        return fusable_attention_probabilities(query, key, bias, scale)
