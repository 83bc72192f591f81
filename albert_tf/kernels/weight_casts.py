"""Casting shared weights to the compute dtype once per forward pass, not once per layer."""

import keras
import tensorflow as tf


class WeightCasts:
    """Hands out compute-dtype copies of float32 variables, made once per variable and pass,
    alone or joined and rearranged (`joined`, `derived`: the Q/K/V kernels side by side or per head).

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

    def joined(self, variables, dtype):
        """`variables` side by side along their last axis, as one `dtype` tensor (for one matmul
        against several layers' kernels); one variable already of `dtype` is its own value."""
        if len(variables) == 1 and keras.backend.standardize_dtype(variables[0].dtype) == dtype:
            return tf.convert_to_tensor(variables[0])
        return self.derived(("joined", dtype), variables, lambda values: tf.cast(_side_by_side(values), dtype))

    def derived(self, key, variables, make):
        """`make(values)` of `variables`' values, computed at the first call with this `key` and
        these variables, and reused by the later ones: one `key` must always mean one `make`.
        `make` rearranges and casts (its gradient is taken again for each reuse, where only
        shapes are left of it)."""
        values = [tf.convert_to_tensor(variable) for variable in variables]
        key = (key, tuple(id(variable) for variable in variables))
        if key not in self._copies:
            # The first use is `make` itself (its gradient flows as usual); the variables are
            # kept alive with the copy so that their ids cannot be reused meanwhile.
            self._copies[key] = (variables, make(values))
            return self._copies[key][1]
        return _reuse(values, self._copies[key][1], make)


def _side_by_side(values):
    return values[0] if len(values) == 1 else tf.concat(values, axis=-1)


def _reuse(values, copy, make):
    """`copy` (= `make(values)`) in the forward pass; in the backward pass, the gradient that
    `make` would send to `values`."""

    @tf.custom_gradient
    def reuse(*values):
        def gradient(upstream):
            with tf.GradientTape() as tape:
                tape.watch(values)
                made = make(list(values))
            return tape.gradient(made, values, output_gradients=upstream)

        return tf.identity(copy), gradient

    return reuse(*values)
