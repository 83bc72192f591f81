"""LayerNorm as the original computes it: epsilon 1e-12, always in float32."""

import keras

# tf.contrib.layers.layer_norm's fixed variance epsilon; Keras' default (1e-3) would change outputs.
LAYER_NORM_EPSILON = 1e-12


def layer_norm(name):
    """A float32 LayerNormalization over the last axis, whatever the model's dtype policy.

    Under mixed precision its inputs are cast up and its output stays float32, so statistics are
    never taken in half precision.
    """
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)
