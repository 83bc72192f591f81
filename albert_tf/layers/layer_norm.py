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
    output up (no-ops under float32). Where `fused_elementwise` applies, the add, the norm and
    their gradient are each one XLA kernel; elsewhere `norm` itself runs.
    """
    if not fused_elementwise.applies(output):
        return norm(tf.cast(residual, tf.float32) + tf.cast(output, tf.float32))
    return _add_and_norm_xla(residual, output, tf.convert_to_tensor(norm.gamma), tf.convert_to_tensor(norm.beta))


def _row_means(value):
    return fused_elementwise.row_sums(value) / tf.cast(tf.shape(value)[-1], value.dtype)


def _normalized(residual, output):
    """(x - mean) / sqrt(variance + epsilon) of x = residual + output, and 1 / sqrt(...)."""
    summed = tf.cast(residual, tf.float32) + tf.cast(output, tf.float32)
    centered = summed - _row_means(summed)
    inverse_std = tf.math.rsqrt(_row_means(tf.square(centered)) + LAYER_NORM_EPSILON)
    return centered * inverse_std, inverse_std


def _add_and_norm_forward(residual, output, gamma, beta):
    return _normalized(residual, output)[0] * gamma + beta


def _add_and_norm_backward(residual, output, gamma, beta, upstream):
    # Recomputes the normalized values from the inputs; the input gradient is the usual
    # inverse_std * (g - mean(g) - x_hat * mean(g * x_hat)) with g = upstream * gamma.
    normalized, inverse_std = _normalized(residual, output)
    scaled = upstream * gamma
    grad = inverse_std * (scaled - _row_means(scaled) - normalized * _row_means(scaled * normalized))
    return (
        tf.cast(grad, residual.dtype),
        tf.cast(grad, output.dtype),
        fused_elementwise.column_sums(upstream * normalized),
        fused_elementwise.column_sums(upstream),
    )


_add_and_norm_xla = fused_elementwise.with_gradient(
    fused_elementwise.xla_kernel(_add_and_norm_forward),
    fused_elementwise.xla_kernel(_add_and_norm_backward),
)


class Float32Outputs:
    """Mixin for layers whose outputs are float32 under any policy (they end in a float32
    LayerNorm or matmul): their symbolic outputs declare float32, not the compute dtype."""

    def compute_output_spec(self, *args, **kwargs):
        spec = super().compute_output_spec(*args, **kwargs)
        return keras.tree.map_structure(lambda t: keras.KerasTensor(t.shape, dtype="float32"), spec)
