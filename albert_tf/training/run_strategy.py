"""What `--strategy` gives a fine-tuning run on this Keras backend (`for_this_backend`).

On TensorFlow a `tf.distribute` strategy (`distribute.get_strategy`, as before JAX and PyTorch ran).
On JAX and PyTorch `keras_distribution.set_distribution` (data parallel over JAX's devices, one
device on PyTorch), wrapped in `KerasDistribution`: the two things of a strategy the fine-tuning
driver uses, `scope()` (nothing to enter: Keras places the variables itself under the distribution
set) and `num_replicas_in_sync`. `model.fit` on a `tf.data` dataset then shards each global batch
over the devices.
"""

import contextlib

import keras

from albert_tf.training import keras_distribution


class KerasDistribution:
    """The `keras.distribution` of this run (set once), seen as a `tf.distribute` strategy."""

    def __init__(self, num_devices):
        self.num_replicas_in_sync = num_devices

    @staticmethod
    def scope():
        return contextlib.nullcontext()


def for_this_backend(name=None, tpu_address=None):
    """The run's strategy for `--strategy` `name` (None: from the hardware); ValueError for one this
    backend cannot run, before any work."""
    if keras.backend.backend() == "tensorflow":
        from albert_tf.training.distribute import get_strategy  # pylint: disable=g-import-not-at-top

        return get_strategy(name, tpu_address=tpu_address)
    return KerasDistribution(keras_distribution.set_distribution(name))
