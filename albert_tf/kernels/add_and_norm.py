"""The residual add + LayerNorm as one XLA kernel forward and one backward, and the same formula
as plain TensorFlow ops (for exports, which hold no XLA kernel)."""

import tensorflow as tf

from albert_tf.kernels import xla_elementwise
from albert_tf.layers.layer_norm import LAYER_NORM_EPSILON


def add_and_norm(norm, residual, output):
    """`norm(residual + output)` in float32, as the reference computes it (`norm` is a Keras
    LayerNormalization with the original's epsilon), where `xla_elementwise` applies; the
    caller falls back to the reference elsewhere."""
    # On 2-D views: XLA's CPU code for these kernels runs faster on [rows, hidden] than on [B, T, H].
    rows = [tf.reshape(t, [-1, output.shape[-1]]) for t in (residual, output)]
    normed = _add_and_norm_xla(*rows, tf.convert_to_tensor(norm.gamma), tf.convert_to_tensor(norm.beta))
    return tf.reshape(normed, output.shape)


def add_and_norm_ops(residual, output, gamma, beta):
    """The forward kernel's normalized sum as plain ops, with `reduce_mean` for the row means
    (outside XLA the matrix-vector form adds kernels): fewer passes over the rows than Keras'
    LayerNorm (docs/benchmarks.md), the reference's values to float rounding."""
    return _normalized_sum(residual, output, gamma, beta, _plain_row_means)[0]


def _row_means(value):
    return xla_elementwise.row_sums(value) / tf.cast(tf.shape(value)[-1], value.dtype)


def _plain_row_means(value):
    return tf.reduce_mean(value, axis=-1, keepdims=True)


def _summed(residual, output):
    return tf.cast(residual, tf.float32) + tf.cast(output, tf.float32)


def _add_and_norm_forward(residual, output, gamma, beta):
    """The normalized sum, and the row means and 1 / sqrt(variance + epsilon) for the backward."""
    return _normalized_sum(residual, output, gamma, beta, _row_means)


def _normalized_sum(residual, output, gamma, beta, row_means):
    summed = _summed(residual, output)
    mean = row_means(summed)
    centered = summed - mean
    inverse_std = tf.math.rsqrt(row_means(tf.square(centered)) + LAYER_NORM_EPSILON)
    return centered * inverse_std * gamma + beta, mean, inverse_std


def _add_and_norm_backward(residual, output, gamma, beta, mean, inverse_std, upstream):
    # The input gradient is the usual inverse_std * (g - mean(g) - x_hat * mean(g * x_hat)),
    # g = upstream * gamma; x_hat is recomputed from the inputs and the saved row statistics
    # (cheaper than storing it). The gamma and beta gradients are column reductions: as
    # products with a ones vector (see `row_sums`) they would stride across rows, several
    # times slower on data that is not in cache.
    normalized = (_summed(residual, output) - mean) * inverse_std
    scaled = upstream * gamma
    grad = inverse_std * (scaled - _row_means(scaled) - normalized * _row_means(scaled * normalized))
    return (
        tf.cast(grad, residual.dtype),
        tf.cast(grad, output.dtype),
        tf.reduce_sum(upstream * normalized, axis=0),
        tf.reduce_sum(upstream, axis=0),
    )


_add_and_norm_xla = xla_elementwise.with_gradient(
    xla_elementwise.xla_kernel(_add_and_norm_forward),
    xla_elementwise.xla_kernel(_add_and_norm_backward),
    saved=2,
)
