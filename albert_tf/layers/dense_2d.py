"""Running a Keras `Dense` on [..., in] inputs as one 2-D MatMul + BiasAdd (+ activation).

Why not just call the layer: Keras' Dense on a 3-D input goes through `tf.tensordot` and adds
its bias with a broadcasting AddV2. Written as MatMul -> BiasAdd on a 2-D view, TF's remapper
fuses the two into one `_FusedMatMul` (with oneDNN, `_MklNativeFusedMatMul`): the bias is added
in the GEMM's epilogue instead of in an extra pass over the output. The arithmetic is the same,
the layer keeps its variables, so checkpoints are untouched.
"""

import tensorflow as tf


def dense_2d(layer, inputs):
    """`layer(inputs)` for a built `keras.layers.Dense`, computed on the [-1, in] view.

    Call it from inside the owning layer's `call`, so that Keras' autocast scope casts the
    kernel and bias to the compute dtype exactly as `layer.__call__` would.
    """
    kernel = tf.convert_to_tensor(layer.kernel)  # already in the compute dtype (autocast)
    flat = tf.cast(tf.reshape(inputs, [-1, kernel.shape[0]]), kernel.dtype)
    outputs = tf.matmul(flat, kernel)
    if layer.bias is not None:
        outputs = tf.nn.bias_add(outputs, tf.convert_to_tensor(layer.bias))
    outputs = layer.activation(outputs)  # Keras stores `linear` (identity) when there is none
    return tf.reshape(outputs, tf.concat([tf.shape(inputs)[:-1], [kernel.shape[1]]], axis=0))
