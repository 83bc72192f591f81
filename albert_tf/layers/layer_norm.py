"""LayerNorm as the original computes it: epsilon 1e-12, always in float32."""

import keras

# tf.contrib.layers.layer_norm's fixed variance epsilon; Keras' default (1e-3) would change outputs.
LAYER_NORM_EPSILON = 1e-12


def layer_norm(name):
    """A float32 LayerNormalization over the last axis, whatever the model's dtype policy.

    Feed it float32 (the kernel sets' `add_and_norm` does): Keras' LayerNormalization returns its
    input's dtype, so a half-precision input would round the float32 result to half precision.
    """
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


class Float32Outputs:
    """Mixin for layers whose outputs are float32 under any policy (they end in a float32
    LayerNorm or matmul): their symbolic outputs declare float32, not the compute dtype."""

    def compute_output_spec(self, *args, **kwargs):
        spec = super().compute_output_spec(*args, **kwargs)
        return keras.tree.map_structure(lambda t: keras.KerasTensor(t.shape, dtype="float32"), spec)
