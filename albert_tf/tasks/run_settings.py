"""What a fine-tuning `output_dir` was trained for, so that a later run there continues only that run.

A checkpoint of one task restores into another task's model of the same shapes (SST-2 into CoLA,
SQuAD 1.1 into 2.0), one trained at another sequence length or with another SentencePiece model
of the same size restores without a word; resuming, evaluating or exporting such a directory would
silently mix two runs. Every task's training records its settings in `<output_dir>/run_settings.json`
when it starts (task, sequence length, config, a hash of the SentencePiece model; and the training
settings); every later command there (do_train, do_eval, do_predict, the exports) compares its
own with them before any work, once the directory holds a trained model. A record written by an
older version lacks some keys: those are not compared (and a resumed training adds them).
"""

import hashlib
import os

import tensorflow as tf

from albert_tf.checkpoints import TRAINING_CHECKPOINT_DIR
from albert_tf.checkpoints.portable import portable_checkpoints
from albert_tf.io_utils import write_json
from albert_tf.training.portable_checkpoints import check_checkpoint_kind
from albert_tf.training.run_records import BEST_METRICS_FILE
from albert_tf.json_text import parse_json
from albert_tf.tasks.config_error import ConfigError

SETTINGS_FILE = "run_settings.json"
SPM_HASH_KEY = "spm_model_sha256"
TRAINING_KEY = "training"  # the record's object of training settings
# Resuming with another value would train the remaining steps on other batches than the run's
# (the data order follows from the batch size and the seed), so that the result is no run at all.
RESUME_REFUSED = ("train_batch_size", "seed")
# A resumed run may change these (a lower learning rate after a divergence, more steps): said.
RESUME_SAID = ("learning_rate", "warmup_step", "warmup_proportion", "train_step", "num_train_epochs")


def file_sha256(path):
    """The SHA-256 of the file's content, in hex."""
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_settings(task, max_seq_length, config, spm_model_file):
    """The settings two runs must share to use one `output_dir`: task, sequence length, model
    config and SentencePiece model (its content's hash)."""
    settings = {"task": task, "max_seq_length": max_seq_length, SPM_HASH_KEY: file_sha256(spm_model_file)}
    settings.update({f"albert_config.{name}": value for name, value in config.to_dict().items()})
    return settings


def training_settings(task_config):
    """The training settings of `RESUME_REFUSED` and `RESUME_SAID` the task's config has, {name: value}."""
    return {name: getattr(task_config, name) for name in RESUME_REFUSED + RESUME_SAID if hasattr(task_config, name)}


def _run_dirs(output_dir):
    """`output_dir` and the `seed_*/` of a `seeds` run in it."""
    return [output_dir, *tf.io.gfile.glob(os.path.join(output_dir, "seed_*"))]


def holds_a_trained_model(output_dir):
    """Whether `output_dir` (or a `seeds` run's `seed_*/` in it) holds training checkpoints or a best model."""
    for run_dir in _run_dirs(output_dir):
        checkpoints = os.path.join(run_dir, TRAINING_CHECKPOINT_DIR)
        if (tf.io.gfile.exists(os.path.join(run_dir, BEST_METRICS_FILE))
                or tf.io.gfile.glob(os.path.join(checkpoints, "*.index")) or portable_checkpoints(checkpoints)):
            return True
    return False


def read_run_settings(output_dir):
    """The record of `output_dir`, or None; an unreadable one is a ConfigError naming it."""
    path = os.path.join(output_dir, SETTINGS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "r") as handle:
            stored = parse_json(handle.read())
        if not isinstance(stored, dict) or not isinstance(stored.get(TRAINING_KEY, {}), dict):
            raise ValueError("not a JSON object of settings")
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise ConfigError("output_dir", None, "{output_dir} {directory}: {path} is unreadable ({error}); use another "
                          "{output_dir}", directory=output_dir, path=path, error=str(error)) from None
    return stored


def _literal(text):
    """`text` as a part of a `NamesSettings` template that names no setting."""
    return str(text).replace("{", "{{").replace("}", "}}")


def _difference(name, there, here):
    """A template part saying how setting `name` differs."""
    if name == SPM_HASH_KEY:
        return (_literal(f"{name} {str(there)[:12]}... there, {here[:12]}... here: ") + "{spm_model_file} is another "
                "SentencePiece model than the run's")
    return _literal(f"{name} {there!r} there, {here!r} here")


def check_run_settings(output_dir, settings):
    """Raises ConfigError if `output_dir` holds a trained run of other `settings` (or an unreadable
    record of one)."""
    stored = read_run_settings(output_dir)
    if stored is None or not holds_a_trained_model(output_dir):
        return
    differ = [_difference(name, stored[name], value) for name, value in settings.items()
              if name in stored and stored[name] != value]
    if differ:
        raise ConfigError("output_dir", None, "{output_dir} {directory} holds a {task} run of other settings (%s); "
                          "use another {output_dir}, or the settings it was trained with" % "; ".join(differ[:3]),
                          directory=output_dir, task=stored.get("task"))


def check_resume(output_dir, training):
    """Before resuming the trained run of `output_dir` with the settings `training` (`training_settings`):
    a ConfigError if one of `RESUME_REFUSED` differs from the record, else (name, value, the run's
    value) of each of `RESUME_SAID` that changed. Checkpoints of another backend's kind are refused first (`check_checkpoint_kind`)."""
    for run_dir in _run_dirs(output_dir):
        try:
            check_checkpoint_kind(os.path.join(run_dir, TRAINING_CHECKPOINT_DIR))
        except ValueError as error:
            raise ConfigError("output_dir", str(error)) from None
    stored = read_run_settings(output_dir)
    if stored is None or not holds_a_trained_model(output_dir):
        return []
    there = stored.get(TRAINING_KEY, {})
    changed = {name: (there[name], value) for name, value in training.items() if name in there and there[name] != value}
    refused = ["{%s}=%s" % (name, _literal(f"{value} (the run's {old})")) for name, (old, value) in changed.items()
               if name in RESUME_REFUSED]
    if refused:
        raise ConfigError("output_dir", None, "{output_dir} {directory}: resuming with %s would train the rest of the "
                          "run on other batches than its own (the data order follows from {train_batch_size} and "
                          "{seed}); give the run's values, or another {output_dir}" % ", ".join(refused),
                          directory=output_dir)
    return [(name, value, old) for name, (old, value) in changed.items()]


def record_run_settings(output_dir, settings, training):
    """Records `settings` and `training` as training starts: anew in a directory without a trained
    model; in a trained one, with this run's training settings (said by `check_resume`) and the keys
    an older record lacked. A trained directory without a record (an older run's) is left to the
    resume's own checkpoint checks, unmarked."""
    stored = read_run_settings(output_dir)
    if not holds_a_trained_model(output_dir):
        stored = {}
    elif stored is None:
        return
    record = {**settings, **stored, TRAINING_KEY: {**stored.get(TRAINING_KEY, {}), **training}}
    if record != stored:
        write_json(os.path.join(output_dir, SETTINGS_FILE), record)
