"""The evaluation records of a fine-tuning run (`best_metrics.json`, `eval_history.json`), kept one
state with its checkpoints.

A run killed between the checkpoint of step N and its records would resume from ckpt-N and never
evaluate step N again: a best step whose weights are not in `best/`, or a history without step N
for good. So the records ride inside every training checkpoint (`EvalRecords`, saved in the same
write) and inside `best/` (the step of its weights); the JSON files are copies written after the
checkpoints, and `repair` rewrites them, and `best/` from the restored weights, on resume.
Hand-edited or damaged files are an error naming the file (`read_best_metrics`, `read_history`).
"""

import json
import math
import os

import tensorflow as tf

from albert_tf.error_text import SettingError
from albert_tf.io_utils import write_json
from albert_tf.json_text import parse_json
from albert_tf.json_fields import json_type

BEST_METRICS_FILE = "best_metrics.json"
EVAL_HISTORY_FILE = "eval_history.json"
# The checkpoint key of the records (a `tf.train.experimental.PythonState` named `records`).
RECORDS_KEY = "records/.ATTRIBUTES/py_state"


class EvalRecords(tf.train.experimental.PythonState):
    """{"best": {"step", "metrics"} or None, "history": [...]} as one JSON string in a checkpoint."""

    def __init__(self, best=None, history=None):
        self.best, self.history = best, list(history or [])

    def serialize(self):
        return json.dumps({"best": self.best, "history": self.history}, sort_keys=True)

    def deserialize(self, string_value):
        value = json.loads(string_value)
        self.best, self.history = value["best"], value["history"]


def stored_records(prefix):
    """The `EvalRecords` saved in the checkpoint at `prefix`, or None (a checkpoint written before
    the records rode in it)."""
    reader = tf.train.load_checkpoint(prefix)
    if RECORDS_KEY not in reader.get_variable_to_shape_map():
        return None
    records = EvalRecords()
    records.deserialize(reader.get_tensor(RECORDS_KEY))
    return records


def _read_json(path, what):
    try:
        with tf.io.gfile.GFile(path, "r") as handle:
            return parse_json(handle.read())
    except (ValueError, UnicodeDecodeError) as error:
        raise _damaged(path, what, f"not JSON: {error}") from None


def _damaged(path, what, problem):
    return SettingError("{path} is not " + what + " ({problem}; hand-edited or damaged): run again with "
                        "{do_train} to rewrite it from the checkpoints, or use another {output_dir}",
                        path=path, problem=problem)


def _check_record(record, path, what, selection_metric=None):
    """`record` is {"step": int, ...metrics or "metrics": {...}} with `selection_metric` a number."""
    if not isinstance(record, dict):
        raise _damaged(path, what, f"{json_type(record)} where an object was expected")
    step = record.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise _damaged(path, what, f"step {step!r}, expected a step number")
    if selection_metric is not None:
        metrics = record.get("metrics")
        value = metrics.get(selection_metric) if isinstance(metrics, dict) else None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise _damaged(path, what, f"no finite {selection_metric!r} in its metrics")


def read_best_metrics(output_dir, selection_metric=None):
    """{"step", "metrics"} of the best evaluation so far in `output_dir`, or None; a record that is
    not one (holding `selection_metric`, when given) is a SettingError naming the file."""
    path = os.path.join(output_dir, BEST_METRICS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    best = _read_json(path, "a best-model record")
    _check_record(best, path, "a best-model record", selection_metric)
    if not isinstance(best.get("metrics"), dict):
        raise _damaged(path, "a best-model record", "no metrics object")
    return best


def read_history(output_dir):
    """The list of `eval_history.json` in `output_dir` ([] if absent), each entry checked."""
    path = os.path.join(output_dir, EVAL_HISTORY_FILE)
    if not tf.io.gfile.exists(path):
        return []
    history = _read_json(path, "an evaluation history")
    if not isinstance(history, list):
        raise _damaged(path, "an evaluation history", f"{json_type(history)} where a list was expected")
    for entry in history:
        _check_record(entry, path, "an evaluation history")
    return history


def write_files(output_dir, records):
    """The JSON copies of `records`: `best_metrics.json` (if there is a best) and `eval_history.json`."""
    if records.best is not None:
        write_json(os.path.join(output_dir, BEST_METRICS_FILE), records.best)
    write_json(os.path.join(output_dir, EVAL_HISTORY_FILE), records.history)


def _file_text(path):
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "rb") as handle:
        return handle.read()


def repair(output_dir, records, step, best_prefix, write_best, checkpoints):
    """After a resume from the checkpoint of `step` holding `records`: `best/` must hold the
    weights of `records.best` (written by `write_best()` from the restored weights when the kill
    came between the two checkpoints) and the JSON files must be `records`. `checkpoints`: the
    backend's kind (`run_checkpoints`), which reads `best/`. Returns what was repaired, as a list
    of file names."""
    repaired = []
    held = checkpoints.best_step(best_prefix)  # None: none there, or one of an older run that does not say
    if records.best is not None and (not checkpoints.exists(best_prefix) or held not in (None, records.best["step"])):
        if records.best["step"] != step:
            raise SettingError("{output_dir} {directory}: {prefix} does not hold the best step {best} its "
                               "records name (it holds step {held}); use another {output_dir}",
                               directory=output_dir, prefix=best_prefix, best=records.best["step"],
                               held=held)
        write_best()
        repaired.append(os.path.basename(os.path.dirname(best_prefix)) + "/")
    before = {name: _file_text(os.path.join(output_dir, name)) for name in (BEST_METRICS_FILE, EVAL_HISTORY_FILE)}
    write_files(output_dir, records)
    repaired += [name for name, text in before.items() if _file_text(os.path.join(output_dir, name)) != text]
    return repaired


def best_step(best_prefix):
    """The step whose weights `best/` holds (its own records), or None (none there, or written before
    the records rode in it)."""
    if not tf.io.gfile.exists(best_prefix + ".index"):
        return None
    try:
        records = stored_records(best_prefix)
    except (tf.errors.OpError, ValueError, KeyError, TypeError):
        return None  # damaged: restoring it names the damage
    return None if records is None or records.best is None else records.best["step"]
