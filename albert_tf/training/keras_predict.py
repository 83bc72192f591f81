"""`model.predict` over a finite dataset: with a progress line, without Keras' false warning.

Keras ends a dataset of unknown length (a TFRecord file's) by running into its end, and then
warns "Your input ran out of data; interrupting training" although nothing was cut short. Here
the batches are counted first (reading and padding them is cheap next to the model) and Keras is
told how many, which also gives the progress line its total and ETA.

Keras traces its predict function with the first batch's shapes and relaxes them only as other
shapes arrive: batches padded to their longest row (and a short last batch) traced it up to three
times per model, and TensorFlow warned "triggered tf.function retracing". Traced first with the
dataset's own spec (length and batch size unknown), it traces once per model.
"""

import keras
import tensorflow as tf

from albert_tf.progress import Progress


def num_batches(dataset):
    """How many elements `dataset` yields: its cardinality when known, else counted."""
    cardinality = int(dataset.cardinality())
    if cardinality == tf.data.INFINITE_CARDINALITY:
        raise ValueError("cannot predict over an infinite dataset (one that repeats)")
    if cardinality >= 0:
        return cardinality
    return int(dataset.reduce(tf.constant(0, tf.int64), lambda count, _: count + 1))


class PredictProgress(keras.callbacks.Callback):
    """A progress line (batches, rate, ETA) for `model.predict`."""

    def __init__(self, label):
        super().__init__()
        self.label = label
        self.progress = None

    def on_predict_begin(self, logs=None):
        self.progress = Progress(self.label, total=self.params.get("steps"), unit="batches")

    def on_predict_batch_end(self, batch, logs=None):
        self.progress.update()

    def on_predict_end(self, logs=None):
        self.progress.close()


def trace_for(model, dataset):
    """Traces `model`'s predict function once, for every batch `dataset` can yield."""
    model.make_predict_function()
    if isinstance(model.predict_function, tf.types.experimental.PolymorphicFunction):  # not run eagerly
        model.predict_function.get_concrete_function([dataset.element_spec] * model.steps_per_execution)


def predict(model, dataset, label="predicting"):
    """`model.predict(dataset)` (a finite dataset of model inputs), showing progress as `label`."""
    trace_for(model, dataset)
    return model.predict(dataset, steps=num_batches(dataset), verbose=0, callbacks=[PredictProgress(label)])
