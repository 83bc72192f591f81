"""The wheel: it builds, installs into a fresh virtual environment and its commands run from any
directory with the bundled defaults (nothing read from the checkout)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

from venv_test_env import env_without_pythonpath, site_dirs, venv_seeing_this_interpreters_packages

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = ("albert-pretrain", "albert-classify", "albert-create-pretraining-data", "albert-export-encoder",
            "albert-train-sentencepiece", "albert-split-corpus", "albert-convert", "albert-experiments", "albert-plot-metrics",
            "albert-squad", "albert-race")


# Not part of the source a wheel is built from: version control, build and run outputs, caches.
_NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "output", "runs", ".cache", "__pycache__", "*.egg-info",
                                     ".pytest_cache")


def _source_files_only(directory, names):
    """`shutil.copytree`'s ignore: _NOT_SOURCE and any virtual environment (the README's `.venv`)."""
    return _NOT_SOURCE(directory, names) | {
        name for name in names if os.path.exists(os.path.join(directory, name, "pyvenv.cfg"))}


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A virtual environment with the wheel installed. It sees this interpreter's packages
    (TensorFlow & co., pip), so nothing is downloaded; the wheel itself is installed without deps."""
    root = tmp_path_factory.mktemp("package")
    # Built from a clean copy: an in-tree build would reuse build/, stale files included.
    source = root / "source"
    shutil.copytree(REPO_ROOT, source, symlinks=True, ignore=_source_files_only)
    wheel_dir = root / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(wheel_dir), str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = wheel_dir.glob("albert_tf-*.whl")
    bin_dir = venv_seeing_this_interpreters_packages(root / "venv")
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    workdir = root / "elsewhere"
    workdir.mkdir()
    return bin_dir, workdir


def run(venv, *args, timeout=600):
    bin_dir, workdir = venv
    env = env_without_pythonpath(TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_the_installed_package_is_not_the_checkout(venv):
    result = run(venv, "python", "-c", "import albert_cli, albert_tf, data_prep; "
                 "print(albert_tf.__file__, albert_cli.__file__, data_prep.__file__)")
    assert result.returncode == 0, result.stderr[-3000:]
    paths = result.stdout.split()
    assert len(paths) == 3 and all("site-packages" in path and not path.startswith(REPO_ROOT) for path in paths)


@pytest.mark.slow
def test_the_environment_sees_this_interpreters_packages(venv):
    """Run from a venv (the README's `.venv`), `--system-site-packages` gave the base Python's instead."""
    result = run(venv, "python", "-c", "import json, sys; print(json.dumps(sys.path))")
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(site_dirs()) <= set(json.loads(result.stdout)), result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_shows_its_flags(venv, command):
    result = run(venv, command, "--help", timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "flags:" in result.stdout and "--" in result.stdout.split("flags:", 1)[1]


@pytest.mark.slow
def test_bundled_pretraining_then_fine_tuning_from_it_run_from_another_directory(venv):
    _, workdir = venv
    result = run(venv, "albert-pretrain", "--output_dir=pretraining", "--max_seq_length=32",
                 "--max_predictions_per_seq=5", "--train_batch_size=4", "--num_train_steps=2", "--num_warmup_steps=0",
                 "--iterations_per_loop=1", "--bundled_dupe_factor=1", "--eval_batch_size=4", "--max_eval_steps=1")
    assert result.returncode == 0, result.stderr[-3000:]
    with open(workdir / "pretraining" / "pretraining_summary.json") as handle:
        assert json.load(handle)["final_step"] == 2
    assert tf.train.latest_checkpoint(str(workdir / "pretraining")).endswith("ckpt-2")
    result = run(venv, "albert-plot-metrics", "pretraining")
    assert result.returncode == 0, result.stderr[-3000:]
    assert any(name.endswith(".png") for name in os.listdir(workdir / "pretraining")), result.stdout

    result = run(venv, "albert-classify", "--task_name=SST-2", "--do_train", "--train_step=1",
                 "--save_checkpoints_steps=1", "--max_seq_length=32", "--train_batch_size=4", "--eval_batch_size=64",
                 "--init_checkpoint=pretraining", "--output_dir=glue")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(TF2 checkpoint)" in result.stderr and "New (not loaded): classification_head." in result.stderr
    assert os.path.exists(workdir / "glue" / "best_metrics.json")

    result = run(venv, "albert-convert", "--from=pretraining", "--to=tf1", "--format=tf1",
                 f"--albert_config_file={os.path.join(REPO_ROOT, 'configs', 'albert_tiny.json')}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Wrote AlbertPretrainingModel as tf1 to tf1" in result.stdout  # the heads travel along
    assert os.path.exists(workdir / "tf1" / "model.ckpt-best.index") and os.path.exists(workdir / "tf1" / "albert_config.json")


@pytest.mark.slow
def test_an_experiment_runs_from_another_directory(venv):
    _, workdir = venv
    result = run(venv, "albert-experiments", "size_and_speed", "--speed_models=albert_base", "--train_steps=1",
                 "--train_batch_size=2", "--max_seq_length=16", "--max_predictions_per_seq=2", "--output_dir=experiment")
    assert result.returncode == 0, result.stderr[-3000:]
    with open(workdir / "experiment" / "results.json") as handle:
        rows = {row["model"]: row for row in json.load(handle)["models"]}
    assert rows["albert_base"]["examples_per_second"] > 0 and "examples_per_second" not in rows["bert_base"]


@pytest.mark.slow
def test_data_tools_run_from_another_directory(venv):
    _, workdir = venv
    corpus = workdir / "corpus.txt"
    with open(os.path.join(REPO_ROOT, "data", "corpus", "sample.txt")) as handle:
        corpus.write_text("".join(handle.readlines()[:2000]))
    result = run(venv, "albert-train-sentencepiece", f"--input={corpus}", "--model_prefix=vocab", "--vocab_size=300",
                 "--num_threads=1")
    assert result.returncode == 0, result.stderr[-3000:]
    result = run(venv, "albert-create-pretraining-data", f"--input_file={corpus}", "--output_file=train.tfrecord",
                 "--spm_model_file=vocab.model", "--max_seq_length=32", "--dupe_factor=1", "--num_workers=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sum(1 for _ in tf.data.TFRecordDataset(str(workdir / "train.tfrecord"))) > 10
