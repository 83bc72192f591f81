"""Drops the metrics of steps a resumed run will redo, so that no step is recorded twice.

After a kill -9 or a failed save, `metrics.jsonl` and the TensorBoard event files hold records
of steps after the checkpoint the run resumes from; the resumed run writes those steps again.
Both are rewritten (atomically) without the records past the restored step.
"""

import json
import os

import tensorflow as tf
from tensorflow.core.util import event_pb2

from albert_tf.io_utils import atomic_open, atomic_output
from albert_tf.pretraining.metrics_log import METRICS_FILE, TENSORBOARD_DIR


def drop_records_after(output_dir, step):
    """Removes records with a step above `step`; returns how many were dropped. Local or remote."""
    return _drop_from_jsonl(os.path.join(output_dir, METRICS_FILE), step) + sum(
        _drop_from_events(path, step)
        for path in tf.io.gfile.glob(os.path.join(output_dir, TENSORBOARD_DIR, "*", "events.out.tfevents.*")))


def _drop_from_jsonl(path, step):
    if not tf.io.gfile.exists(path):
        return 0
    with tf.io.gfile.GFile(path) as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    kept = [line for line in lines if _jsonl_step(line) <= step]
    if len(kept) < len(lines):
        with atomic_open(path, "w") as handle:
            handle.write("".join(line + "\n" for line in kept))
    return len(lines) - len(kept)


def _jsonl_step(line):
    try:
        return int(json.loads(line)["step"])
    except (ValueError, KeyError, TypeError):
        return float("inf")  # a line cut by the kill: drop it too


def _drop_from_events(path, step):
    records = [record.numpy() for record in tf.data.TFRecordDataset(path).ignore_errors()]
    kept = [record for record in records if event_pb2.Event.FromString(record).step <= step]
    if len(kept) < len(records):
        with atomic_output(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
            for record in kept:
                writer.write(record)
    return len(records) - len(kept)
