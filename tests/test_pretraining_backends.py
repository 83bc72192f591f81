"""`run_pretraining.py` on JAX and PyTorch: resume after SIGTERM and kill -9, JAX data parallelism.

Each run is the command in a child process on its backend (TensorFlow importable: it feeds the
data). A stop is made exact by a wrapper around the trainer's loop that signals its own process
after the loop that reaches a given step, so no test waits on time.
"""

import json
import os
import signal

import numpy as np
import pytest

import pretraining_test_data as data
from backend_process import REPO, completed_on_backend, script_code

NON_TENSORFLOW = ["jax", "torch"]
# The test model with dropout, so that a resumed run must restore the dropout seeds too.
DROPOUT_CONFIG = dict(data.TEST_CONFIG, hidden_dropout_prob=0.1)


def _flags(tmp_path, output_dir, **overrides):
    config = tmp_path / "dropout_config.json"
    config.write_text(json.dumps(DROPOUT_CONFIG))
    flags = dict(num_train_steps=8, save_checkpoints_steps=4, iterations_per_loop=2, albert_config_file=config)
    flags.update(overrides)
    return data.small_run_flags(str(tmp_path), str(output_dir), **flags)


def _signalling_code(signal_name, at_step):
    """Code that makes the trainer's loop send `signal_name` to its own process once it reaches `at_step`."""
    return (
        "import os, signal\n"
        "from albert_tf.pretraining import keras_trainer\n"
        "_loop = keras_trainer.KerasPretrainingTrainer.train_loop\n"
        "def train_loop(self, iterator, num_steps):\n"
        "    _loop(self, iterator, num_steps)\n"
        f"    if self.step == {at_step}:\n"
        f"        os.kill(os.getpid(), signal.{signal_name})\n"
        "keras_trainer.KerasPretrainingTrainer.train_loop = train_loop\n"
    )


def _pretrain(backend, flags, prelude="", env=None):
    setup = "".join(f"import os\nos.environ[{key!r}] = {value!r}\n" for key, value in (env or {}).items())
    code = setup + prelude + script_code(os.path.join(REPO, "run_pretraining.py"), *flags)
    return completed_on_backend(backend, code, tensorflow=True, timeout=600)


def _weights(checkpoint_dir):
    from safetensors.numpy import load_file

    return load_file(os.path.join(checkpoint_dir, "weights.safetensors"))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """`uninterrupted(backend)`: (flag directory, output directory) of one whole run per backend."""
    root, runs = tmp_path_factory.mktemp("uninterrupted"), {}

    def run(backend):
        if backend not in runs:
            whole = _pretrain(backend, _flags(root, root / backend))
            assert whole.returncode == 0, whole.stderr[-3000:]
            runs[backend] = root / backend
        return root, runs[backend]

    return run


def _train_losses(output_dir):
    with open(os.path.join(output_dir, "metrics.jsonl")) as handle:
        records = [json.loads(line) for line in handle]
    return [record["loss"] for record in records if record["split"] == "train"]


@pytest.mark.parametrize("backend", NON_TENSORFLOW)
def test_a_stopped_or_killed_run_resumes_to_the_weights_of_an_uninterrupted_one(uninterrupted, backend):
    tmp_path, whole = uninterrupted(backend)
    stopped = tmp_path / f"stopped_{backend}"
    first = _pretrain(backend, _flags(tmp_path, stopped), prelude=_signalling_code("SIGTERM", 2))
    assert first.returncode == 143, first.stderr[-3000:]
    assert "stopped by SIGTERM at step 2" in first.stderr
    assert os.path.isdir(stopped / "ckpt-2") and not os.path.exists(stopped / "ckpt-8")
    killed = _pretrain(backend, _flags(tmp_path, stopped), prelude=_signalling_code("SIGKILL", 6))
    assert killed.returncode == -signal.SIGKILL
    assert "resuming from ckpt-2 (step 2)" in killed.stderr
    assert os.path.isdir(stopped / "ckpt-4") and not os.path.exists(stopped / "ckpt-6")
    last = _pretrain(backend, _flags(tmp_path, stopped))
    assert last.returncode == 0, last.stderr[-3000:]
    assert "resuming from ckpt-4 (step 4)" in last.stderr

    expected, resumed = _weights(whole / "ckpt-8"), _weights(stopped / "ckpt-8")
    assert expected.keys() == resumed.keys()
    for name in expected:  # the same batches, dropout masks and optimizer state: the same weights
        np.testing.assert_allclose(resumed[name], expected[name], rtol=1e-6, atol=1e-7, err_msg=name)
    state = json.loads((stopped / "ckpt-8" / "state.json").read_text())
    assert state["backend"] == backend and state["step"] == 8 and state["data_steps"] == "8"


# Records, from inside the jitted step, how the input ids are laid out over the devices.
_RECORD_SHARDS = """
import jax
from albert_tf.pretraining import keras_trainer
_call = keras_trainer.PretrainingObjective.call
def call(self, inputs, training=False):
    def record(sharding):
        with open({path!r}, "w") as handle:
            handle.write(repr([len(sharding.device_set), list(sharding.shard_shape(tuple(inputs["input_word_ids"].shape)))]))
    jax.debug.inspect_array_sharding(inputs["input_word_ids"], callback=record)
    return _call(self, inputs, training)
keras_trainer.PretrainingObjective.call = call
"""


def test_two_jax_devices_each_take_half_of_each_batch_and_train_as_one(uninterrupted):
    tmp_path, one = uninterrupted("jax")
    shards = tmp_path / "shards.txt"
    two = _pretrain("jax", _flags(tmp_path, tmp_path / "two", strategy="mirrored", num_cpu_devices=2),
                    prelude=_RECORD_SHARDS.format(path=str(shards)))
    assert two.returncode == 0, two.stderr[-3000:]
    assert shards.read_text() == repr([2, [4, data.SEQ_LENGTH]])  # batch 8: 4 rows on each device
    summary = json.loads((tmp_path / "two" / "pretraining_summary.json").read_text())
    assert summary["replicas"] == 2 and summary["strategy"].startswith("keras.distribution.DataParallel")
    # The gradients of the two halves are summed (an all-reduce): the one-device curve and weights.
    np.testing.assert_allclose(_train_losses(tmp_path / "two"), _train_losses(one), rtol=2e-5)
    one_weights, two_weights = _weights(one / "ckpt-8"), _weights(tmp_path / "two" / "ckpt-8")
    for name in one_weights:
        np.testing.assert_allclose(two_weights[name], one_weights[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("backend, flag, expected", [
    ("torch", "--strategy=tpu", "--strategy: strategy tpu needs KERAS_BACKEND=jax or tensorflow"),
    ("jax", "--grad_accum_steps=2", "--grad_accum_steps is for the TensorFlow backend only"),
])
def test_what_a_backend_cannot_do_is_one_line_before_any_work(tmp_path, backend, flag, expected):
    output_dir = tmp_path / "run"
    result = _pretrain(backend, _flags(tmp_path, output_dir) + [flag])
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in result.stderr
    assert not output_dir.exists()


_REFUSED_ON_TORCH = """
from albert_tf.training import keras_distribution
for strategy, devices in (("mirrored", 1), ("multi_worker_mirrored", 1), ("tpu", 1), (None, 2)):
    try:
        keras_distribution.set_distribution(strategy, devices)
    except ValueError as error:
        print(error)
"""


def test_pytorch_refuses_every_strategy_but_one_device():
    lines = completed_on_backend("torch", _REFUSED_ON_TORCH).stdout.splitlines()
    assert lines == [f"strategy {name} needs KERAS_BACKEND=jax or tensorflow; the torch backend trains on one device"
                     for name in ("mirrored", "multi_worker_mirrored", "tpu")] + [
        "several CPU devices needs KERAS_BACKEND=jax or tensorflow; the torch backend trains on one device"]


def test_a_checkpoint_of_another_backend_is_named_with_the_backend_to_resume_on(uninterrupted):
    tmp_path, output_dir = uninterrupted("jax")
    before = sorted(os.listdir(output_dir))
    again = _pretrain("tensorflow", _flags(tmp_path, output_dir))
    assert again.returncode == 2
    assert "holds portable checkpoints written on the jax backend: resume with KERAS_BACKEND=jax" in again.stderr
    assert sorted(os.listdir(output_dir)) == before


def test_an_unknown_keras_backend_is_one_line(tmp_path):
    result = _pretrain("jax", _flags(tmp_path, tmp_path / "run"), env={"KERAS_BACKEND": "numpy"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: KERAS_BACKEND=numpy: expected one of tensorflow, jax, torch (docs/backends.md)")
