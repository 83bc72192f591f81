"""LayerNorm as the original computes it: epsilon 1e-12, always in float32."""

import keras
import tensorflow as tf

# tf.contrib.layers.layer_norm's fixed variance epsilon; Keras' default (1e-3) would change outputs.
LAYER_NORM_EPSILON = 1e-12


def layer_norm(name):
    """A float32 LayerNormalization over the last axis, whatever the model's dtype policy.

    Feed it float32 (`add_and_norm` does): Keras' LayerNormalization returns its input's dtype,
    so a half-precision input would round the float32 result to half precision and cast it back.
    """
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


def add_and_norm(layer_norm, residual, output):
    """`layer_norm(residual + output)` with the add and the norm in float32.

    A sub-layer's matmuls run in the compute dtype; the residual stream between sub-layers stays
    float32 under mixed precision, so each sub-layer casts only its matmul input down and its
    output up (no-ops under float32).
    """
    return layer_norm(tf.cast(residual, tf.float32) + tf.cast(output, tf.float32))


def float32_spec(spec):
    """`spec` (a KerasTensor or a structure of them) as float32: for layers whose outputs come
    from a float32 LayerNorm (or a float32 matmul), so symbolic outputs show the dtype they have."""
    return keras.tree.map_structure(lambda t: keras.KerasTensor(t.shape, dtype="float32"), spec)
