"""What a fine-tuning `--output_dir` was trained for, so that a later run there continues only that run.

A SQuAD 1.1 checkpoint restores into a 2.0 model's encoder, one trained at another sequence
length restores without a word, and the task heads are not compared by name; resuming such a
directory would silently mix two runs. The training settings are written to
`<output_dir>/run_settings.json` when training starts, and every later run in that directory
compares its own with them first.
"""

import os

import tensorflow as tf

from albert_cli.cli import UsageError
from albert_tf.checkpoints import TRAINING_CHECKPOINT_DIR
from albert_tf.io_utils import write_json
from albert_tf.json_text import parse_json

SETTINGS_FILE = "run_settings.json"


def run_settings(task, max_seq_length, config):
    """The settings two runs must share to use one `--output_dir`: task, sequence length, model config."""
    settings = {"task": task, "max_seq_length": max_seq_length}
    settings.update({f"albert_config.{name}": value for name, value in config.to_dict().items()})
    return settings


def check_run_settings(output_dir, settings):
    """Raises UsageError if `output_dir` holds a run of other `settings` (or an unreadable record of one)."""
    path = os.path.join(output_dir, SETTINGS_FILE)
    if not tf.io.gfile.exists(path):
        return
    try:
        with tf.io.gfile.GFile(path, "r") as handle:
            stored = parse_json(handle.read())
        if not isinstance(stored, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"--output_dir {output_dir}: {path} is unreadable ({error}); use another --output_dir") \
            from None
    differ = [f"{name} {stored.get(name)!r} there, {value!r} here" for name, value in settings.items()
              if stored.get(name) != value]
    if differ:
        raise UsageError(f"--output_dir {output_dir} holds a {stored.get('task')} run of other settings "
                         f"({'; '.join(differ[:3])}); use another --output_dir, or the settings it was trained with")


def record_run_settings(output_dir, settings):
    """Records `settings` for a fresh run; a directory with training checkpoints but no record (another
    task's, or an older run's) is left to the resume's own checkpoint checks, unmarked."""
    path = os.path.join(output_dir, SETTINGS_FILE)
    if tf.io.gfile.exists(path) or tf.io.gfile.glob(os.path.join(output_dir, TRAINING_CHECKPOINT_DIR, "*.index")):
        return
    write_json(path, settings)
