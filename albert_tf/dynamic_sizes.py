"""A size known only when a graph runs, checked there: the one thing the model needs of its
backend beyond `keras.ops`.

Only TensorFlow traces graphs with dimensions unknown until run time (`tf.function` with a
`None` input dimension, a SavedModel signature); JAX and PyTorch trace with concrete shapes, so
there the static check always applies. TensorFlow is imported only when a size is a tensor of
its own, i.e. only on the TensorFlow backend.
"""

import keras


def at_most(size, limit, message):
    """`size` (an int, or a scalar tensor of a traced TensorFlow graph), refused with
    `message` when larger than `limit`: ValueError now when it is known now, else a graph
    assertion (InvalidArgumentError when the graph runs)."""
    if isinstance(size, int):
        if size > limit:
            raise ValueError(message)
        return size
    if keras.backend.backend() != "tensorflow":
        raise TypeError(f"a dynamic size exists only on the TensorFlow backend, got {size!r}")
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    with tf.control_dependencies([tf.debugging.assert_less_equal(size, limit, message=message)]):
        return tf.identity(size)
