"""For the exact-resume tests of the fine-tuning scripts: a run killed (kill -9) right after it
saves a given training checkpoint, and the tensors of a checkpoint to compare bit for bit."""

import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The same TensorFlow kernels in every run: the scripts ask for oneDNN before importing
# TensorFlow, the wrapper below imports it first.
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_ENABLE_ONEDNN_OPTS="1", PYTHONPATH=REPO)

KILLED_AFTER_SAVE = """
import os, runpy, signal, sys
step, script = int(sys.argv[1]), sys.argv[2]
sys.argv = sys.argv[2:]
import tensorflow as tf
save = tf.train.CheckpointManager.save
def save_then_die(self, checkpoint_number=None, *args, **kwargs):
    path = save(self, checkpoint_number, *args, **kwargs)
    if checkpoint_number == step:
        os.kill(os.getpid(), signal.SIGKILL)
    return path
tf.train.CheckpointManager.save = save_then_die
runpy.run_path(script, run_name="__main__")
"""


def run_script(script, args, killed_after_save=None):
    """Runs `script` (a path under the repository) with `args` and `--deterministic` (without it the
    default CPU kernels drift apart, `kernels.DETERMINISTIC_KERNEL_SETS`); with `killed_after_save=N`, it is killed by
    SIGKILL as soon as training checkpoint N is saved."""
    command = [sys.executable, os.path.join(REPO, script), *args, "--deterministic"]
    if killed_after_save is not None:
        command = [sys.executable, "-c", KILLED_AFTER_SAVE, str(killed_after_save)] + command[1:]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, cwd=REPO, timeout=900)


def checkpoint_tensors(prefix):
    """{name: value} of every tensor of the checkpoint `prefix` but the count of saves."""
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH" and not name.startswith("save_counter")}


def differing_tensors(left, right):
    """The names of the tensors of two checkpoints (`checkpoint_tensors`) that are not bit-identical."""
    assert left.keys() == right.keys() and any("optimizer" in name for name in left)
    # np.asarray: the evaluation records are a string (bytes), the rest arrays.
    return [name for name in left if np.asarray(left[name]).tobytes() != np.asarray(right[name]).tobytes()]


def assert_resume_is_exact(run, tmp_path, killed_after_save, steps):
    """Runs `run(output_dir, killed_after_save=None)` (a fine-tuning script) uninterrupted, then
    killed after checkpoint `killed_after_save` and rerun; the checkpoints of `steps` must be
    bit-identical. Returns the rerun's result."""
    uninterrupted, killed = run(tmp_path / "uninterrupted"), run(tmp_path / "killed", killed_after_save)
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    assert killed.returncode == -9, killed.stderr[-3000:]
    latest = tf.train.latest_checkpoint(str(tmp_path / "killed" / "checkpoints"))
    assert latest.endswith(f"ckpt-{killed_after_save}"), latest
    resumed = run(tmp_path / "killed")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for step in steps:
        left, right = (checkpoint_tensors(str(tmp_path / name / "checkpoints" / f"ckpt-{step}"))
                       for name in ("uninterrupted", "killed"))
        different = differing_tensors(left, right)
        assert not different, f"ckpt-{step}: {len(different)} of {len(left)} tensors differ, e.g. {different[:3]}"
    return resumed
