"""Running a Keras `Dense` on [..., in] inputs as one 2-D MatMul + BiasAdd (+ activation).

Why not just call the layer: Keras' Dense on a 3-D input goes through `tf.tensordot` and adds
its bias with a broadcasting AddV2. Written as MatMul -> BiasAdd on a 2-D view, TF's remapper
fuses the two into one `_FusedMatMul` (with oneDNN, `_MklNativeFusedMatMul`): the bias is added
in the GEMM's epilogue instead of in an extra pass over the output. The arithmetic is the same,
the layer keeps its variables, so checkpoints are untouched.
"""

import tensorflow as tf

from albert_tf.layers.weight_casts import WeightCasts


def dense_2d(layer, inputs, casts=None):
    """`layer(inputs)` for a built `keras.layers.Dense`, computed on the [-1, in] view.

    Inputs, kernel and bias are cast to the layer's compute dtype, as `layer.__call__` would;
    `casts` (a `WeightCasts`) shares one cast of the weights among the layers that reuse them.
    """
    casts = casts or WeightCasts()
    dtype = layer.compute_dtype
    kernel = casts(layer.kernel, dtype)
    flat = tf.cast(tf.reshape(inputs, [-1, kernel.shape[0]]), dtype)
    outputs = tf.matmul(flat, kernel)
    if layer.bias is not None:
        outputs = tf.nn.bias_add(outputs, casts(layer.bias, dtype))
    outputs = layer.activation(outputs)  # Keras stores `linear` (identity) when there is none
    return tf.reshape(outputs, tf.concat([tf.shape(inputs)[:-1], [kernel.shape[1]]], axis=0))
