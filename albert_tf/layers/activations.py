"""The activations the original accepts, by the names its configs use."""

import math

import keras
import tensorflow as tf

# 0.5 * (1 + tanh(z)) == sigmoid(2z), with z = sqrt(2/pi) * (x + 0.044715 x^3).
_TWO_SQRT_2_OVER_PI = 2.0 * math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715


@tf.custom_gradient
def gelu(x):
    """The tanh approximation of GELU: what the original's "gelu" computes (not the erf form).

    The original writes 0.5 * x * (1 + tanh(z)); this computes the same function as
    x * sigmoid(2z), with a hand-written gradient. Why: the FFN's GELU runs on the largest
    activation of the model ([tokens, intermediate]) and, unfused, every elementwise op is a full
    pass over it. TF's `tf.nn.gelu` graph (pow, tanh) and its autodiff take about twice the passes
    of this form. Outputs agree with the original's formula to float32 rounding (tested).
    """
    gate = tf.sigmoid(x * (_TWO_SQRT_2_OVER_PI + (_TWO_SQRT_2_OVER_PI * _CUBIC) * tf.square(x)))

    def gradient(upstream):
        # d/dx [x * sigmoid(u)] = sigmoid(u) + x * sigmoid'(u) * du/dx, du/dx = c (1 + 3 a x^2).
        slope = x * (_TWO_SQRT_2_OVER_PI + (3.0 * _TWO_SQRT_2_OVER_PI * _CUBIC) * tf.square(x))
        return upstream * gate + tf.raw_ops.SigmoidGrad(y=gate, dy=upstream * slope)

    return x * gate, gradient


_ACTIVATIONS = {
    "gelu": gelu,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": None,
}


def get_activation(name):
    """Maps a config's `hidden_act` to a callable (None for "linear")."""
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]
