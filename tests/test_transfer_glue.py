"""bench/transfer_glue.py: the pretrained-vs-random table's arithmetic and its reuse of finished runs (only of this recipe)."""

import json
import os
import subprocess
import sys
import types

import pytest

from glue_test_data import REPO, load_bench_script

SCRIPT = os.path.join(REPO, "bench", "transfer_glue.py")


@pytest.fixture(scope="module")
def transfer():
    return load_bench_script("transfer_glue")


def _write_run(directory, values, majority, last_step=None):
    """A finished `run_classifier.py --seeds=N` output: one run per value dict, each seed's dev
    evaluations ending at `last_step` (if given)."""
    os.makedirs(directory, exist_ok=True)
    runs = [{"metrics": metrics, "seed": seed} for seed, metrics in enumerate(values, 1)]
    for run in runs if last_step else ():
        os.makedirs(os.path.join(directory, f"seed_{run['seed']}"))
        with open(os.path.join(directory, f"seed_{run['seed']}", "eval_history.json"), "w") as handle:
            json.dump([{"step": last_step // 2, **run["metrics"]}, {"step": last_step, **run["metrics"]}], handle)
    with open(os.path.join(directory, "seeds_summary.json"), "w") as handle:
        json.dump({"runs": runs}, handle)
    with open(os.path.join(directory, "eval_results.json"), "w") as handle:
        json.dump({f"majority_baseline_{k}": v for k, v in majority.items()}, handle)


def test_summary_is_mean_and_sample_std_over_seeds(transfer, tmp_path):
    _write_run(tmp_path, [{"accuracy": 0.70}, {"accuracy": 0.72}, {"accuracy": 0.74}], {"accuracy": 0.68})
    summary = transfer.summarize("MRPC", str(tmp_path))
    assert summary["runs"] == 3
    assert summary["metrics"]["accuracy"]["mean"] == pytest.approx(0.72)
    assert summary["metrics"]["accuracy"]["std"] == pytest.approx(0.02)  # n - 1 in the denominator
    assert summary["majority_baseline"] == {"accuracy": 0.68}


def _results(metric, pretrained, random):
    def start(mean, std):
        return {"T": {"metrics": {metric: {"mean": mean, "std": std}}}}
    return {"pretrained": start(*pretrained), "random": start(*random)}


def test_margin_is_over_the_larger_spread_and_must_exceed_two(transfer):
    assert transfer.compare(_results("pearson", (0.30, 0.01), (0.20, 0.04)), "T", "pearson") == (True, pytest.approx(2.5))
    wins, ratio = transfer.compare(_results("pearson", (0.75, 0.25), (0.25, 0.125)), "T", "pearson")
    assert (wins, ratio) == (False, pytest.approx(2.0))  # exactly two spreads (binary-exact values) is not beyond them
    assert transfer.compare(_results("accuracy", (0.70, 0.0), (0.70, 0.0)), "T", "accuracy") == (False, 0.0)


def test_lower_mse_counts_as_better(transfer):
    wins, ratio = transfer.compare(_results("mse", (2.0, 0.1), (2.5, 0.1)), "T", "mse")
    assert wins and ratio == pytest.approx(5.0)
    wins, ratio = transfer.compare(_results("mse", (2.5, 0.1), (2.0, 0.1)), "T", "mse")
    assert not wins and ratio == pytest.approx(-5.0)


def test_a_finished_pair_is_reused_not_rerun(transfer, tmp_path, monkeypatch):
    _write_run(tmp_path / "random" / "STS-B", [{"pearson": 0.1}, {"pearson": 0.2}], {},
               last_step=transfer.RECIPE["STS-B"][0])
    monkeypatch.setattr(transfer.subprocess, "run", lambda *a, **k: pytest.fail("a finished run was rerun"))
    args = types.SimpleNamespace(output_dir=str(tmp_path), reinit_pooler=False)
    assert transfer.run_pair("STS-B", "random", args) == str(tmp_path / "random" / "STS-B")


def test_a_finished_pair_of_another_recipe_is_an_error_not_reused(transfer, tmp_path, monkeypatch):
    # SST-2's recipe once had 1,000 steps: such a run in the same folder must not enter the table.
    _write_run(tmp_path / "random" / "SST-2", [{"accuracy": 0.8}, {"accuracy": 0.8}], {}, last_step=1000)
    monkeypatch.setattr(transfer.subprocess, "run", lambda *a, **k: pytest.fail("an old run was silently redone"))
    args = types.SimpleNamespace(output_dir=str(tmp_path), reinit_pooler=False)
    with pytest.raises(RuntimeError, match=r"seed_1.eval_history\.json: trained for 1000 steps, the recipe for 6315"):
        transfer.run_pair("SST-2", "random", args)
    _write_run(tmp_path / "random" / "CoLA", [{"mcc": 0.1}], {})  # no per-seed history to check
    with pytest.raises(RuntimeError, match="no seed_.*eval_history.json"):
        transfer.run_pair("CoLA", "random", args)


def test_another_recipes_run_is_a_one_line_error_from_the_script(tmp_path):
    _write_run(tmp_path / "pretrained" / "MRPC", [{"accuracy": 0.7}], {"accuracy": 0.68}, last_step=345)
    result = subprocess.run([sys.executable, SCRIPT, "--init_checkpoint=x", "--albert_config_file=x",
                             f"--data_dir={tmp_path}", f"--output_dir={tmp_path}", "--tasks=MRPC",
                             "--starts=pretrained"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "trained for 345 steps, the recipe for 1150" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_run_gets_the_recipe_and_only_the_pretrained_start_the_checkpoint(transfer, tmp_path, monkeypatch):
    commands = {}

    def fake_run(command):
        start = "pretrained" if any(arg.startswith("--init_checkpoint=") for arg in command) else "random"
        commands[start] = command
        _write_run(tmp_path / start / "MRPC", [{"accuracy": 0.7}], {})
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr(transfer.subprocess, "run", fake_run)
    args = types.SimpleNamespace(output_dir=str(tmp_path), reinit_pooler=False, data_dir="glue", albert_config_file="c",
                                 seeds=3, seed=1, learning_rate=3e-5, max_seq_length=128, init_checkpoint="ckpt")
    for start in transfer.START_NAMES:
        transfer.run_pair("MRPC", start, args)
    for start, command in commands.items():
        assert [arg for arg in command if arg.startswith("--max_seq_length")] == ["--max_seq_length=128"], start
        assert {"--learning_rate=3e-05", "--train_step=1150", "--warmup_step=115", "--seeds=3"} <= set(command)
    differ = set(commands["pretrained"]) ^ set(commands["random"])
    assert differ == {"--init_checkpoint=ckpt", f"--output_dir={tmp_path / 'pretrained' / 'MRPC'}",
                      f"--output_dir={tmp_path / 'random' / 'MRPC'}"}


def test_unknown_task_is_a_one_line_usage_error(tmp_path):
    result = subprocess.run([sys.executable, SCRIPT, "--init_checkpoint=x", "--albert_config_file=x",
                             f"--data_dir={tmp_path}", f"--output_dir={tmp_path}", "--tasks=SST-2,QQQ"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "unknown --tasks/--starts value(s): QQQ" in result.stderr
    assert "Traceback" not in result.stderr
