"""Scalars for TensorBoard: one event-file writer per split under `<output_dir>/logs/<split>`, as
pretraining and fine-tuning both write them (TensorBoard draws each split as a run)."""

import os

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

# What `tf.summary.scalar` attaches; written directly because that function lives in the
# `tensorboard` package, which TensorFlow does not install (TensorBoard itself reads these).
SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
)

TENSORBOARD_DIR = "logs"


class TensorBoardLog:
    """Writes `{name: number}` at a step for a split, flushed at once (a killed run keeps what it wrote)."""

    def __init__(self, output_dir):
        self.output_dir = output_dir
        self._writers = {}

    def write(self, split, step, values):
        writer = self._writer(split)
        with writer.as_default(step=int(step)):
            for name, value in values.items():
                tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=SCALAR_METADATA)
        writer.flush()

    def _writer(self, split):
        if split not in self._writers:
            self._writers[split] = tf.summary.create_file_writer(os.path.join(self.output_dir, TENSORBOARD_DIR, split))
        return self._writers[split]

    def close(self):
        for writer in self._writers.values():
            writer.close()
