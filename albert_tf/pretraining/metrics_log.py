"""Where metrics go: TensorBoard event files and a JSON-lines file, written by the chief only."""

import json
import os
import time

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

# What `tf.summary.scalar` attaches; written directly because that function lives in the
# `tensorboard` package, which TensorFlow no longer installs (TensorBoard itself reads these).
SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
)

METRICS_FILE = "metrics.jsonl"
TENSORBOARD_DIR = "logs"


class MetricsLog:
    """Writes `{"step", "split", <metric>: value, ...}` records to `metrics.jsonl` (appended, so
    a resumed run continues the same file) and to TensorBoard under `logs/<split>`."""

    def __init__(self, output_dir, enabled=True):
        self.output_dir = output_dir
        self.enabled = enabled
        self._writers = {}

    def write(self, split, step, values):
        record = {"step": int(step), "split": split, "time": round(time.time(), 3)}
        record.update({name: _json_number(value) for name, value in values.items()})
        if not self.enabled:
            return record
        with tf.io.gfile.GFile(os.path.join(self.output_dir, METRICS_FILE), "a") as handle:
            handle.write(json.dumps(record) + "\n")
        with self._writer(split).as_default(step=int(step)):
            for name, value in values.items():
                tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=SCALAR_METADATA)
        self._writer(split).flush()
        return record

    def _writer(self, split):
        if split not in self._writers:
            self._writers[split] = tf.summary.create_file_writer(os.path.join(self.output_dir, TENSORBOARD_DIR, split))
        return self._writers[split]

    def close(self):
        for writer in self._writers.values():
            writer.close()


def _json_number(value):
    value = float(value)
    # JSON has no NaN/inf; keep the file parseable by strict readers.
    return value if value == value and abs(value) != float("inf") else str(value)


def read_metrics(output_dir):
    """The records of `metrics.jsonl` in order (for tests, notebooks and the summary)."""
    path = os.path.join(output_dir, METRICS_FILE)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def best_eval_record(records):
    """The evaluation record of lowest held-out `loss` (the earliest of equals), or None."""
    evaluations = [record for record in records if record["split"] == "eval" and isinstance(record["loss"], float)]
    return min(evaluations, key=lambda record: record["loss"], default=None)
