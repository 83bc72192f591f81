"""Where metrics go: TensorBoard event files and a JSON-lines file, written by the chief only."""

import json
import os
import time

import tensorflow as tf

from albert_tf.json_text import parse_json
from albert_tf.training.tensorboard_log import TensorBoardLog

METRICS_FILE = "metrics.jsonl"


class MetricsLog:
    """Writes `{"step", "split", <metric>: value, ...}` records to `metrics.jsonl` (appended, so
    a resumed run continues the same file) and to TensorBoard under `logs/<split>`."""

    def __init__(self, output_dir, enabled=True):
        self.output_dir = output_dir
        self.enabled = enabled
        self._tensorboard = TensorBoardLog(output_dir)

    def write(self, split, step, values):
        record = {"step": int(step), "split": split, "time": round(time.time(), 3)}
        record.update({name: _json_number(value) for name, value in values.items()})
        if not self.enabled:
            return record
        with tf.io.gfile.GFile(os.path.join(self.output_dir, METRICS_FILE), "a") as handle:
            handle.write(json.dumps(record) + "\n")
        self._tensorboard.write(split, step, values)
        return record

    def close(self):
        self._tensorboard.close()


def _json_number(value):
    value = float(value)
    # JSON has no NaN/inf; keep the file parseable by strict readers.
    return value if value == value and abs(value) != float("inf") else str(value)


def read_metrics(output_dir):
    """The records of `metrics.jsonl` in order (for tests, notebooks and the summary). Raises
    ValueError naming the file and line of one that is not a record (`parse_record`)."""
    path = os.path.join(output_dir, METRICS_FILE)
    records = []
    for line_number, line in metrics_lines(path):
        try:
            records.append(parse_record(line))
        except ValueError as error:
            raise ValueError(f"{path}:{line_number}: {error}") from None
    return records


def metrics_lines(path):
    """(line number, bytes) of the non-blank lines of the metrics file `path` (none if absent)."""
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path, "rb") as handle:
        return [(number, line) for number, line in enumerate(handle.read().splitlines(), start=1) if line.strip()]


def parse_record(line):
    """The record of one line (bytes) of `metrics.jsonl`: a JSON object with an integer "step"
    and a string "split"; ValueError saying what it is instead (e.g. a line cut by a kill -9)."""
    try:
        record = parse_json(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except ValueError as error:
        raise ValueError(f"not JSON ({error})") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    if not isinstance(record.get("step"), int) or not isinstance(record.get("split"), str):
        raise ValueError('expected a record with an integer "step" and a string "split"')
    return record


def best_eval_record(records):
    """The evaluation record of lowest held-out `loss` (the earliest of equals), or None."""
    evaluations = [record for record in records if record["split"] == "eval" and isinstance(record.get("loss"), float)]
    return min(evaluations, key=lambda record: record["loss"], default=None)
