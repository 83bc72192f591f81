"""The original's tanh-GELU with a hand-written gradient, as TF ops or one XLA kernel each way.

The same function as `albert_tf.layers.activations.gelu`, written x * sigmoid(2z) with
z = sqrt(2/pi) * (x + 0.044715 x^3): the FFN's GELU runs on the largest activation of the model
([tokens, intermediate]), and TF's graph of the original formula (pow, tanh) and its autodiff
take about twice the passes of this form.
"""

import functools
import math

import tensorflow as tf

from albert_tf.kernels import xla_elementwise

# 0.5 * (1 + tanh(z)) == sigmoid(2z).
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


_gelu_xla = xla_elementwise.with_gradient(
    xla_elementwise.xla_kernel(_in_float32(_gelu_forward)),
    xla_elementwise.xla_kernel(_in_float32(_gelu_backward)),
)


def gelu(x):
    """Forward and backward each one XLA kernel in float32 where `xla_elementwise` applies;
    elsewhere TF ops in the input's dtype. Agrees with the original's formula to float32
    rounding (tested)."""
    return (_gelu_xla if xla_elementwise.applies(x) else _gelu_tf_ops)(x)
