"""Held-out evaluation during pretraining: when it runs, where it is written, the best step."""

import json
import os

import pytest
import tensorflow as tf

from albert_tf.pretraining.metrics_log import best_eval_record, read_metrics
from pretraining_test_data import run_script, small_run_flags, write_random_records


def eval_steps_in_tensorboard(log_dir):
    steps = set()
    for name in os.listdir(log_dir):
        for event in tf.compat.v1.train.summary_iterator(os.path.join(log_dir, name)):
            if any(value.tag == "masked_lm_accuracy" for value in event.summary.value):
                steps.add(event.step)
    return sorted(steps)


@pytest.mark.parametrize("extra_flags, expected_steps", [
    ([], [0, 4, 8]),  # default: at each checkpoint (--save_checkpoints_steps=4) and at the end
    (["--eval_every_steps=6"], [0, 6, 8]),  # the first loop end 6 steps after the last one, and the end
])
def test_heldout_evaluation_runs_during_training_and_reports_the_best_step(tmp_path, extra_flags, expected_steps):
    heldout = write_random_records(str(tmp_path / "heldout.tfrecord"), 48, seed=1)
    output_dir = str(tmp_path / "out")
    flags = small_run_flags(tmp_path, output_dir, do_eval=True, eval_input_file=heldout, eval_batch_size=8,
                            max_eval_steps=3, num_train_steps=8, iterations_per_loop=2, save_checkpoints_steps=4)
    result = run_script(flags + extra_flags)
    assert result.returncode == 0, result.stderr[-3000:]

    evaluations = [record for record in read_metrics(output_dir) if record["split"] == "eval"]
    assert [record["step"] for record in evaluations] == expected_steps
    assert all(record["eval_steps"] == 3 for record in evaluations)
    assert eval_steps_in_tensorboard(os.path.join(output_dir, "logs", "eval")) == expected_steps
    for step in expected_steps:
        assert f"evaluation at step {step}: loss" in result.stderr

    with open(os.path.join(output_dir, "pretraining_summary.json")) as handle:
        summary = json.load(handle)
    best = min(evaluations, key=lambda record: record["loss"])
    assert summary["best_eval_step"] == best["step"] and summary["eval_best"] == best
    assert summary["eval_initial"]["step"] == 0 and summary["eval"]["step"] == 8
    assert summary["eval"]["loss"] == evaluations[-1]["loss"]


def test_best_eval_record_takes_the_lowest_finite_loss_and_the_earliest_of_equals():
    records = [
        {"split": "train", "step": 2, "loss": 0.1},
        {"split": "eval", "step": 0, "loss": 9.0},
        {"split": "eval", "step": 2, "loss": 4.0},
        {"split": "eval", "step": 4, "loss": "nan"},
        {"split": "eval", "step": 6, "loss": 4.0},
        {"split": "eval", "step": 8, "loss": 5.0},
    ]
    assert best_eval_record(records)["step"] == 2
    assert best_eval_record(records[:1]) is None


def test_eval_every_steps_must_be_positive(tmp_path):
    result = run_script(small_run_flags(tmp_path, str(tmp_path / "out"), eval_every_steps=0), timeout=120)
    assert result.returncode == 2 and "--eval_every_steps=0: 0 is not a positive integer" in result.stderr
    assert "Traceback" not in result.stderr
