"""The activations the original accepts, by the names its configs use."""

import keras
from keras import ops

from albert_tf.config import ACTIVATIONS


def gelu(x):
    """GELU as the original's "gelu" computes it: the tanh approximation (not the erf form).

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), in the input's dtype: Keras'
    `gelu(approximate=True)` is this formula in each backend's own op. On PyTorch that is one fused
    kernel each way, where the formula spelled out in ops is eight eager ops and their gradients on
    the model's largest activation (the FFN's [tokens, intermediate]; docs/benchmarks.md).
    """
    return ops.gelu(x, approximate=True)


def get_activation(name):
    """Maps a config's `hidden_act` (one of `config.ACTIVATIONS`) to its function: the original's
    tanh GELU, else Keras' function of that name."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {list(ACTIVATIONS)}")
    return gelu if name == "gelu" else keras.activations.get(name)
