"""The activations the original accepts, by the names its configs use."""

import keras


def gelu(x):
    """The tanh approximation of GELU: what the original's "gelu" computes (not the erf form)."""
    return keras.activations.gelu(x, approximate=True)


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
