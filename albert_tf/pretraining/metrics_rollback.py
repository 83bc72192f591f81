"""Drops the metrics of steps a resumed run will redo, so that no step is recorded twice.

After a kill -9 or a failed save, `metrics.jsonl` and the TensorBoard event files hold records
of steps after the checkpoint the run resumes from; the resumed run writes those steps again.
Both are rewritten (atomically) without the records past the restored step. A line of
`metrics.jsonl` that is no record (cut by the kill, or damaged) goes too, with a warning naming
its line, and is kept in `metrics.jsonl.dropped`.
"""

import os

import tensorflow as tf
from absl import logging
from tensorflow.core.util import event_pb2

from albert_tf.io_utils import atomic_open, atomic_output
from albert_tf.pretraining.metrics_log import METRICS_FILE, metrics_lines, parse_record
from albert_tf.training.tensorboard_log import TENSORBOARD_DIR

DROPPED_SUFFIX = ".dropped"


def drop_records_after(output_dir, step):
    """Removes records with a step above `step`; returns how many were dropped. Local or remote."""
    return _drop_from_jsonl(os.path.join(output_dir, METRICS_FILE), step) + sum(
        _drop_from_events(path, step)
        for path in tf.io.gfile.glob(os.path.join(output_dir, TENSORBOARD_DIR, "*", "events.out.tfevents.*")))


def _drop_from_jsonl(path, step):
    lines = metrics_lines(path)
    kept, garbage = [], []
    for line_number, line in lines:
        try:
            if parse_record(line)["step"] <= step:
                kept.append(line)
        except ValueError as error:  # e.g. the last line, cut by the kill
            garbage.append((line_number, line, error))
    if garbage:
        _keep_dropped(path, garbage)
    if len(kept) < len(lines):
        with atomic_open(path, "wb") as handle:
            handle.write(b"".join(line + b"\n" for line in kept))
    return len(lines) - len(kept)


def _keep_dropped(path, garbage):
    """Appends the lines that are no record to `<path>.dropped` and says which they were."""
    with tf.io.gfile.GFile(path + DROPPED_SUFFIX, "ab") as handle:
        handle.write(b"".join(line + b"\n" for _, line, _ in garbage))
    for line_number, line, error in garbage:
        text = line.decode("utf-8", errors="replace")
        logging.warning("%s:%d: dropped a line that is no metrics record (%s): %s (kept in %s)",
                        path, line_number, error, text[:80] + ("..." if len(text) > 80 else ""),
                        path + DROPPED_SUFFIX)


def _drop_from_events(path, step):
    records = [record.numpy() for record in tf.data.TFRecordDataset(path).ignore_errors()]
    kept = [record for record in records if event_pb2.Event.FromString(record).step <= step]
    if len(kept) < len(records):
        with atomic_output(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
            for record in kept:
                writer.write(record)
    return len(records) - len(kept)
