"""Casting shared weights to the compute dtype once per forward pass, not once per layer."""

import keras
import tensorflow as tf


class WeightCasts:
    """Hands out compute-dtype copies of float32 variables, one cast per variable and pass.

    Why: under mixed precision a Keras layer casts its kernel at every call, and ALBERT calls one
    block in every layer, so each shared matrix would be copied `num_layers` times per pass (for
    albert-base, 85M elements per forward pass, about as much as all its activation casts).
    Every use still sends its own gradient back to the variable cast up to float32, so the
    per-layer gradients are summed in float32 exactly as they are with a cast per use.

    Make one inside each traced call and share it among the layers of that call only: a copy
    holds the variable's value when it was cast, so reusing one across steps or graphs would
    serve stale weights.
    """

    def __init__(self):
        self._copies = {}

    def __call__(self, variable, dtype):
        """`variable` as a `dtype` tensor (the variable's own value when the dtypes match)."""
        value = tf.convert_to_tensor(variable)
        if keras.backend.standardize_dtype(variable.dtype) == dtype:
            return value
        key = (id(variable), dtype)
        if key not in self._copies:
            # The first use is a plain cast (its gradient flows as usual); `variable` is kept
            # alive with the copy so that its id cannot be reused by another object meanwhile.
            self._copies[key] = (variable, tf.cast(value, dtype))
            return self._copies[key][1]
        return _reuse(value, self._copies[key][1])


def _reuse(value, copy):
    """`copy` in the forward pass; in the backward pass, the gradient goes to `value` in float32."""

    @tf.custom_gradient
    def reuse(value):
        def gradient(upstream):
            return tf.cast(upstream, value.dtype)

        return tf.identity(copy), gradient

    return reuse(value)
