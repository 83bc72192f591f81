"""The activations the original accepts, by the names its configs use."""

import functools
import math

import keras
import tensorflow as tf

from albert_tf.layers import fused_elementwise

# 0.5 * (1 + tanh(z)) == sigmoid(2z), with z = sqrt(2/pi) * (x + 0.044715 x^3).
_TWO_SQRT_2_OVER_PI = 2.0 * math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715


def _gate(x):
    return tf.sigmoid(x * (_TWO_SQRT_2_OVER_PI + (_TWO_SQRT_2_OVER_PI * _CUBIC) * tf.square(x)))


def _gradient(x, gate, upstream):
    # d/dx [x * sigmoid(u)] = sigmoid(u) + x * sigmoid'(u) * du/dx, du/dx = c (1 + 3 a x^2).
    slope = x * (_TWO_SQRT_2_OVER_PI + (3.0 * _TWO_SQRT_2_OVER_PI * _CUBIC) * tf.square(x))
    return upstream * gate + tf.raw_ops.SigmoidGrad(y=gate, dy=upstream * slope)


@tf.custom_gradient
def _gelu_tf_ops(x):
    """As TF ops: the gate is kept from the forward pass for the gradient."""
    gate = _gate(x)
    return x * gate, lambda upstream: _gradient(x, gate, upstream)


def _gelu_forward(x):
    return x * _gate(x)


def _gelu_backward(x, upstream):
    """Inside one XLA kernel, recomputing the gate costs less than storing it."""
    return _gradient(x, _gate(x), upstream)


def _in_float32(function):
    """`function` computed in float32, its result cast to the first input's dtype (inside an XLA
    kernel the casts cost nothing, and half-precision inputs get a float32 GELU)."""

    @functools.wraps(function)  # the kernel keeps the function's name in graphs and profiles
    def computed_in_float32(x, *rest):
        return tf.cast(function(*(tf.cast(t, tf.float32) for t in (x, *rest))), x.dtype)

    return computed_in_float32


_gelu_xla = fused_elementwise.with_gradient(
    fused_elementwise.xla_kernel(_in_float32(_gelu_forward)),
    fused_elementwise.xla_kernel(_in_float32(_gelu_backward)),
)


def gelu(x):
    """The tanh approximation of GELU: what the original's "gelu" computes (not the erf form).

    The original writes 0.5 * x * (1 + tanh(z)); this computes the same function as
    x * sigmoid(2z), with a hand-written gradient: the FFN's GELU runs on the largest activation
    of the model ([tokens, intermediate]), and TF's `tf.nn.gelu` graph (pow, tanh) and its
    autodiff take about twice the passes of this form. Where `fused_elementwise` applies, forward
    and backward are each one XLA kernel, computed in float32; elsewhere they are TensorFlow ops
    in the input's dtype. Outputs agree with the original's formula to float32
    rounding (tested).
    """
    return (_gelu_xla if fused_elementwise.applies(x) else _gelu_tf_ops)(x)


def gelu_for_inference(x):
    """`gelu` for graphs that take no gradient through it.

    Where `fused_elementwise.onednn_inference(x.dtype)` holds it is written as
    `tf.nn.gelu(approximate=True)`, the original's formula and the pattern that TF's remapper
    folds into the MatMul + BiasAdd before it: one oneDNN call that applies GELU to the float32
    accumulator, so the [tokens, intermediate] activation is written once and never re-read.
    Elsewhere it is `gelu`.
    """
    if fused_elementwise.onednn_inference(x.dtype):
        return tf.nn.gelu(x, approximate=True)
    return gelu(x)


_ACTIVATIONS = {
    "gelu": gelu,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": None,
}


def get_activation(name, inference=False):
    """Maps a config's `hidden_act` to a callable (None for "linear"); `inference=True` gives
    the same function in the form for graphs that take no gradient (`gelu_for_inference`)."""
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {sorted(_ACTIVATIONS)}")
    if inference and name == "gelu":
        return gelu_for_inference
    return _ACTIVATIONS[name]
