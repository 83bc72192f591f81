"""The activations the original accepts, by the names its configs use."""

import math

import keras
import tensorflow as tf


def gelu(x):
    """GELU as the original's "gelu" computes it: the tanh approximation (not the erf form).

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), in the input's dtype.
    """
    return 0.5 * x * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))


_ACTIVATIONS = {
    "gelu": gelu,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": keras.activations.linear,
}

ACTIVATION_NAMES = tuple(_ACTIVATIONS)


def get_activation(name):
    """Maps a config's `hidden_act` to its function."""
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]
