"""Running Keras `Dense` layers on [..., in] inputs as one 2-D MatMul + BiasAdd (+ activation).

Why not just call the layer: Keras' Dense on a 3-D input goes through `tf.tensordot` and adds
its bias with a broadcasting AddV2. Written as MatMul -> BiasAdd on a 2-D view, TF's remapper
fuses the two into one `_FusedMatMul` (with oneDNN, `_MklNativeFusedMatMul`): the bias is added
in the GEMM's epilogue instead of in an extra pass over the output. The arithmetic is the same,
the layers keep their variables, so checkpoints are untouched.
"""

import tensorflow as tf

from albert_tf.kernels.weight_casts import WeightCasts


def _flat_outputs(layers, inputs, casts):
    """The [-1, sum of units] outputs of `layers` (no activation) on the 2-D view of `inputs`."""
    if len({layer.bias is None for layer in layers}) > 1:
        raise ValueError("dense_2d: the layers must all have a bias or all have none.")
    casts = casts or WeightCasts()
    dtype = layers[0].compute_dtype
    kernel = casts.joined([layer.kernel for layer in layers], dtype)
    flat = tf.cast(tf.reshape(inputs, [-1, kernel.shape[0]]), dtype)
    outputs = tf.matmul(flat, kernel)
    if layers[0].bias is not None:
        outputs = tf.nn.bias_add(outputs, casts.joined([layer.bias for layer in layers], dtype))
    return outputs


def _unflattened(outputs, inputs):
    return tf.reshape(outputs, tf.concat([tf.shape(inputs)[:-1], [outputs.shape[-1]]], axis=0))


def dense_2d(layer, inputs, casts=None, activation=None):
    """`layer(inputs)` for a built `keras.layers.Dense`, computed on the [-1, in] view.

    Inputs, kernel and bias are cast to the layer's compute dtype, as `layer.__call__` would;
    `casts` (a `WeightCasts`) shares one cast of the weights among the layers that reuse them.
    `activation` replaces the layer's own (the same function in another form, see
    `activations.get_activation`); it is applied to the 2-D view, where the remapper can fuse it.
    """
    outputs = _flat_outputs([layer], inputs, casts)
    outputs = (activation or layer.activation)(outputs)  # Keras stores `linear` when there is none
    return _unflattened(outputs, inputs)


def stacked_dense_2d(layers, inputs, casts=None):
    """The outputs of several built Dense layers (same input size and dtype, no activation) on
    the same `inputs`, side by side on the last axis.

    Why: one matmul against the layers' kernels joined is one larger GEMM instead of several
    (attention's query, key and value), which oneDNN runs faster than the same work split, and
    in the backward pass one matmul each for the input and the weight gradient.
    """
    if any(layer.activation.__name__ != "linear" for layer in layers):
        raise ValueError("stacked_dense_2d: every layer must have no activation.")
    return _unflattened(_flat_outputs(layers, inputs, casts), inputs)
