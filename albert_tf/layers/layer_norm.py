"""LayerNorm as the original computes it: epsilon 1e-12, always in float32."""

import keras
import tensorflow as tf

from albert_tf.layers import fused_elementwise

# tf.contrib.layers.layer_norm's fixed variance epsilon; Keras' default (1e-3) would change outputs.
LAYER_NORM_EPSILON = 1e-12


def layer_norm(name):
    """A float32 LayerNormalization over the last axis, whatever the model's dtype policy.

    Feed it float32 (`add_and_norm` does): Keras' LayerNormalization returns its input's dtype,
    so a half-precision input would round the float32 result to half precision and cast it back.
    """
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


def add_and_norm(norm, residual, output):
    """`norm(residual + output)` with the add and the norm in float32.

    A sub-layer's matmuls run in the compute dtype; the residual stream between sub-layers stays
    float32 under mixed precision, so each sub-layer casts only its matmul input down and its
    output up (no-ops under float32). Where `fused_elementwise` applies, the add and the norm are
    one XLA kernel and their gradient another; elsewhere `norm` itself runs.
    """
    if not fused_elementwise.applies(output):
        return norm(tf.cast(residual, tf.float32) + tf.cast(output, tf.float32))
    # On 2-D views: XLA's CPU code for these kernels runs faster on [rows, hidden] than on [B, T, H].
    rows = [tf.reshape(t, [-1, output.shape[-1]]) for t in (residual, output)]
    normed = _add_and_norm_xla(*rows, tf.convert_to_tensor(norm.gamma), tf.convert_to_tensor(norm.beta))
    return tf.reshape(normed, output.shape)


def _row_means(value):
    return fused_elementwise.row_sums(value) / tf.cast(tf.shape(value)[-1], value.dtype)


def _summed(residual, output):
    return tf.cast(residual, tf.float32) + tf.cast(output, tf.float32)


def _add_and_norm_forward(residual, output, gamma, beta):
    """The normalized sum, and the row means and 1 / sqrt(variance + epsilon) for the backward."""
    summed = _summed(residual, output)
    mean = _row_means(summed)
    centered = summed - mean
    inverse_std = tf.math.rsqrt(_row_means(tf.square(centered)) + LAYER_NORM_EPSILON)
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


_add_and_norm_xla = fused_elementwise.with_gradient(
    fused_elementwise.xla_kernel(_add_and_norm_forward),
    fused_elementwise.xla_kernel(_add_and_norm_backward),
    saved=2,
)


class Float32Outputs:
    """Mixin for layers whose outputs are float32 under any policy (they end in a float32
    LayerNorm or matmul): their symbolic outputs declare float32, not the compute dtype."""

    def compute_output_spec(self, *args, **kwargs):
        spec = super().compute_output_spec(*args, **kwargs)
        return keras.tree.map_structure(lambda t: keras.KerasTensor(t.shape, dtype="float32"), spec)
