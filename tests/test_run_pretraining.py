"""run_pretraining.py end to end: bad input, divergence, preemption and resume, learning."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from pretraining_test_data import REPO_ROOT, assert_same_weights, model_weights, run_script, script_command, small_run_flags


@pytest.mark.parametrize(
    "flag_list, expected",
    [
        (["--train_batch_size=0"], "--train_batch_size=0: 0 is not a positive integer"),
        (["--num_warmup_steps=-1"], "--num_warmup_steps=-1: -1 is not a non-negative integer"),
        (["--learning_rate=nan"], "--learning_rate=nan: must be a finite number > 0"),
        (["--do_train=false", "--do_eval=false"], "nothing to do: --do_train and --do_eval are both false"),
        (["--max_predictions_per_seq=80"], "--max_predictions_per_seq must be <= --max_seq_length"),
        (["--use_tpu", "--strategy=mirrored"], "--use_tpu conflicts with --strategy"),
        (["--init_checkpoint=/nonexistent/ckpt-1"], "--init_checkpoint=/nonexistent/ckpt-1: is neither a checkpoint"),
        (["--optimizer=sgd"], "--optimizer"),
        (["--albert_config_file=/nonexistent.json"], "--albert_config_file=/nonexistent.json: does not exist"),
        (["--train_batch_size=30", "--grad_accum_steps=4"], "must be a multiple of --grad_accum_steps"),
        (["--no_such_flag=1"], "no_such_flag"),
        (["--input_file=/nonexistent/*.tfrecord"], "--input_file: pretraining data: '/nonexistent/*.tfrecord' matches no file"),
    ],
)
def test_bad_input_exits_2_with_one_line(flag_list, expected, tmp_path):
    result = run_script([f"--output_dir={tmp_path}"] + flag_list, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_input_with_other_lengths_is_rejected_naming_the_flag(tmp_path):
    result = run_script(small_run_flags(tmp_path, str(tmp_path / "out"), max_seq_length=32), timeout=120)
    assert result.returncode == 2
    assert "error: --input_file:" in result.stderr and "max_seq_length" in result.stderr
    assert "Traceback" not in result.stderr


def test_non_finite_loss_stops_with_a_clear_message_and_keeps_the_last_good_checkpoint(tmp_path):
    output_dir = str(tmp_path / "out")
    # Warmup keeps step 0 at learning rate 0, so the first checkpoints hold finite weights;
    # then a huge rate blows the weights up and the loss becomes NaN.
    flags = small_run_flags(tmp_path, output_dir, learning_rate=1e30, num_warmup_steps=1000, num_train_steps=20,
                            iterations_per_loop=1, save_checkpoints_steps=1)
    result = run_script(flags)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    (message,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "non-finite loss" in message and "Last good checkpoint" in message
    latest = tf.train.latest_checkpoint(output_dir)
    assert latest and latest in message
    assert all(np.isfinite(value).all() for value in model_weights(latest).values())


# 16 steps, one checkpoint at the end: what the SIGTERM and --recompute tests compare with.
WHOLE_RUN = dict(num_train_steps=16, save_checkpoints_steps=100)


@pytest.fixture(scope="module")
def whole_run_weights(tmp_path_factory):
    """The final weights of an uninterrupted WHOLE_RUN."""
    tmp_path = tmp_path_factory.mktemp("whole")
    uninterrupted = run_script(small_run_flags(tmp_path, str(tmp_path / "whole"), **WHOLE_RUN))
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    return model_weights(tf.train.latest_checkpoint(str(tmp_path / "whole")))


@pytest.mark.slow
def test_sigterm_saves_and_a_restarted_run_ends_like_an_uninterrupted_one(tmp_path, whole_run_weights):
    interrupted_dir = str(tmp_path / "interrupted")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    process = subprocess.Popen(script_command(small_run_flags(tmp_path, interrupted_dir, **WHOLE_RUN)), cwd=REPO_ROOT,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        metrics_file = os.path.join(interrupted_dir, "metrics.jsonl")
        deadline = time.monotonic() + 240
        while not (os.path.exists(metrics_file) and os.path.getsize(metrics_file)) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()[-3000:]
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143, stderr[-3000:]
    assert "stopped by SIGTERM" in stderr and "Traceback" not in stderr
    stopped_at = int(tf.train.latest_checkpoint(interrupted_dir).rsplit("-", 1)[1])
    assert 0 < stopped_at < 16

    resumed = run_script(small_run_flags(tmp_path, interrupted_dir, **WHOLE_RUN))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert tf.train.latest_checkpoint(interrupted_dir).endswith("ckpt-16")
    assert_same_weights(whole_run_weights, model_weights(tf.train.latest_checkpoint(interrupted_dir)))


@pytest.mark.slow
def test_tiny_model_learns_on_the_bundled_corpus(tmp_path):
    """The no-flags path (bundled data, held-out split, tiny config) at a smaller size."""
    output_dir = str(tmp_path / "out")
    result = run_script([
        f"--output_dir={output_dir}", "--max_seq_length=64", "--max_predictions_per_seq=10", "--train_batch_size=16",
        "--num_train_steps=60", "--num_warmup_steps=6", "--learning_rate=0.02", "--iterations_per_loop=10",
        "--bundled_dupe_factor=1", "--max_eval_steps=4", "--eval_batch_size=16",
    ], timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(output_dir, "pretraining_summary.json")) as handle:
        summary = json.load(handle)
    first, last = summary["train_first"], summary["train_last"]
    assert (first["step"], last["step"]) == (10, 60)
    assert last["masked_lm_loss"] < first["masked_lm_loss"] - 1.0
    assert summary["eval_files"].endswith("heldout-seq64-pred10.tfrecord")
    before, after = summary["eval_initial"], summary["eval"]
    assert after["masked_lm_loss"] < before["masked_lm_loss"] - 2.0
    assert after["masked_lm_accuracy"] > before["masked_lm_accuracy"] + 0.03
    assert summary["best_eval_step"] == 60  # held-out evaluations at 0 and at the end (no checkpoint between)
    assert os.listdir(os.path.join(output_dir, "logs", "train")) and os.listdir(os.path.join(output_dir, "logs", "eval"))


def flagfile_values(*flagfiles):
    """run_pretraining.py's flag values after parsing `flagfiles`, from the repository root."""
    args = [f"--flagfile={path}" for path in flagfiles]
    script = (
        "import json\nfrom absl import flags\nimport run_pretraining\n"
        f"flags.FLAGS(['run_pretraining', *{args!r}])\n"
        "print(json.dumps({name: flags.FLAGS[name].value for name in flags.FLAGS if not name.startswith('?')}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_paper_flagfile_gives_the_originals_defaults():
    values = flagfile_values("configs/pretraining_paper.flags")
    expected = {
        "max_seq_length": 512, "max_predictions_per_seq": 20, "do_train": True, "do_eval": False,
        "train_batch_size": 4096, "eval_batch_size": 64, "optimizer": "lamb", "learning_rate": 0.00176,
        "poly_power": 1.0, "num_train_steps": 125000, "num_warmup_steps": 3125, "start_warmup_step": 0,
        "save_checkpoints_steps": 5000, "keep_checkpoint_max": 5, "iterations_per_loop": 1000, "max_eval_steps": 100,
    }
    assert {name: values[name] for name in expected} == expected


def test_books_vocabulary_recipe_is_the_cpu_recipe_with_only_the_vocabulary_changed():
    recipe = flagfile_values("configs/pretraining_cpu_gutenberg.flags")
    books_vocab = flagfile_values("configs/pretraining_cpu_gutenberg_vocab8k.flags")
    differ = {name for name in recipe if recipe[name] != books_vocab[name]}
    assert differ == {"albert_config_file"}
    configs = [json.load(open(os.path.join(REPO_ROOT, values["albert_config_file"]), encoding="utf-8"))
               for values in (recipe, books_vocab)]
    assert (configs[0]["vocab_size"], configs[1]["vocab_size"]) == (30000, 8000)
    assert {key for key in configs[0] if configs[0][key] != configs[1][key]} == {"vocab_size"}


def test_the_4096_continuation_runs_the_books_model_block_sparse():
    values = flagfile_values("configs/pretraining_cpu_gutenberg_vocab8k_4096.flags")
    assert (values["max_seq_length"], values["max_predictions_per_seq"]) == (4096, 160)  # the original's 20 per 512
    configs = [json.load(open(os.path.join(REPO_ROOT, path), encoding="utf-8"))
               for path in ("configs/albert_cpu_small_vocab8k.json", values["albert_config_file"])]
    assert {key for key in configs[1] if configs[0].get(key) != configs[1][key]} == {
        "attention_type", "block_size", "num_random_blocks", "max_position_embeddings"}
    assert configs[1]["max_position_embeddings"] == 4096 and configs[1]["attention_type"] == "block_sparse"


@pytest.mark.slow
def test_a_rerun_says_it_is_finished_and_a_resume_where_it_resumes(tmp_path):
    output_dir = tmp_path / "out"
    metrics_file, summary_file = output_dir / "metrics.jsonl", output_dir / "pretraining_summary.json"

    def run(num_train_steps):
        result = run_script(small_run_flags(tmp_path, str(output_dir), num_train_steps=num_train_steps, do_eval=True,
                                            iterations_per_loop=1, save_checkpoints_steps=2, max_eval_steps=1),
                            timeout=900)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
        return result

    def eval_steps():
        return [record["step"] for record in map(json.loads, metrics_file.read_text().splitlines())
                if record["split"] == "eval"]

    first = run(2)
    assert f"no checkpoint in {output_dir}: training a fresh model from step 0 to step 2" in first.stderr
    metrics, summary = metrics_file.read_text(), json.loads(summary_file.read_text())
    assert eval_steps() == [0, 2] and summary["eval_initial"]["step"] == 0 and summary["eval"]["step"] == 2

    again = run(2)  # the same command: nothing is trained, evaluated or recorded again
    assert (f"finished run: ckpt-2 (step 2) in {output_dir} is the last step (--num_train_steps=2); "
            "nothing to train") in again.stderr
    assert "evaluation at step" not in again.stderr and "0 steps" not in again.stderr
    assert metrics_file.read_text() == metrics and json.loads(summary_file.read_text()) == summary
    # Stdout says where the whole summary is, in a few lines (the JSON stays in its file).
    assert f"summary (JSON): {summary_file}" in again.stdout and len(again.stdout.splitlines()) <= 6

    resumed = run(4)
    assert f"resuming from ckpt-2 (step 2) in {output_dir}: training to step 4" in resumed.stderr
    resumed_summary = json.loads(summary_file.read_text())
    assert eval_steps() == [0, 2, 4] and resumed_summary["eval_initial"] == summary["eval_initial"]

    # Stopped after its last checkpoint, before the summary: only the summary is written.
    summary_file.unlink()
    metrics = metrics_file.read_text()
    completed = run(4)
    assert "finished run: ckpt-4 (step 4)" in completed.stderr and "evaluation at step" not in completed.stderr
    assert metrics_file.read_text() == metrics
    completed_summary = json.loads(summary_file.read_text())
    assert completed_summary["final_step"] == 4 and completed_summary["eval"]["step"] == 4
    assert completed_summary["eval_initial"] == summary["eval_initial"]


@pytest.mark.slow
def test_a_resumed_run_checkpoints_and_evaluates_on_the_multiples_of_the_schedule(tmp_path):
    output_dir = tmp_path / "out"

    def run(num_train_steps):
        result = run_script(small_run_flags(tmp_path, str(output_dir), num_train_steps=num_train_steps, do_eval=True,
                                            iterations_per_loop=2, save_checkpoints_steps=4, max_eval_steps=1,
                                            keep_checkpoint_max=10))
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]

    run(3)  # stopped off the schedule, as a SIGTERM leaves a run
    run(8)
    records = [json.loads(line) for line in (output_dir / "metrics.jsonl").read_text().splitlines()]
    state = tf.train.get_checkpoint_state(str(output_dir))
    saved = [int(path.rsplit("-", 1)[1]) for path in state.all_model_checkpoint_paths]
    assert saved == [3, 4, 8]  # not 3, 7, 8 (four steps after the resume)
    assert [record["step"] for record in records if record["split"] == "eval"] == [0, 3, 4, 8]
    assert [record["step"] for record in records if record["split"] == "train"] == [2, 3, 4, 6, 8]


def test_an_eval_file_with_evaluation_off_is_warned_about(tmp_path):
    # The missing --input_file stops the run right after the warning.
    result = run_script([f"--output_dir={tmp_path}", "--do_eval=false", f"--eval_input_file={tmp_path}/heldout.tfrecord",
                         "--input_file=/nonexistent/*.tfrecord"], timeout=600)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: --eval_input_file is not read: --do_eval is false (add --do_eval to evaluate)"]
    assert result.returncode == 2


def test_recompute_trains_to_the_same_weights_and_refuses_dropout(tmp_path, whole_run_weights):
    """--recompute changes memory and time only: 16 steps give the weights of 16 steps without it.
    With dropout in the config it stops with a one-line error naming the flag."""
    output_dir = str(tmp_path / "recompute")
    result = run_script(small_run_flags(tmp_path, output_dir, recompute=True, **WHOLE_RUN), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_same_weights(whole_run_weights, model_weights(tf.train.latest_checkpoint(output_dir)))

    config_file = tmp_path / "dropout_config.json"
    config = json.loads(open(small_run_flags(tmp_path, "unused")[0].split("=", 1)[1]).read())
    config_file.write_text(json.dumps({**config, "hidden_dropout_prob": 0.1}))
    result = run_script(small_run_flags(tmp_path, str(tmp_path / "dropout"), recompute=True,
                                        albert_config_file=config_file), timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: --recompute needs hidden_dropout_prob")
