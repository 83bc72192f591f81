"""bench/transfer_glue.py: the pretrained-vs-random table's arithmetic and its reuse of finished runs
(only those made with the same flags)."""

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


def _write_run(directory, values, majority):
    """A finished `run_classifier.py --seeds=N` output: one run per value dict."""
    os.makedirs(directory, exist_ok=True)
    runs = [{"metrics": metrics, "seed": seed} for seed, metrics in enumerate(values, 1)]
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


def _args(tmp_path, **changes):
    settings = dict(output_dir=str(tmp_path), reinit_pooler=False, data_dir="glue", albert_config_file="c",
                    seeds=3, seed=1, learning_rate=1e-4, max_seq_length=64, init_checkpoint="ckpt",
                    random_dir=None, spm_model_file=None)
    return types.SimpleNamespace(**{**settings, **changes})


def _fake_run(tmp_path, commands):
    """Stands in for run_classifier.py: records the command and writes the run's outputs."""
    def fake_run(command):
        start = "pretrained" if any(arg.startswith("--init_checkpoint=") for arg in command) else "random"
        task = next(arg.split("=", 1)[1] for arg in command if arg.startswith("--task_name="))
        commands[start] = command
        _write_run(tmp_path / start / task, [{"accuracy": 0.7}], {"accuracy": 0.68})
        return types.SimpleNamespace(returncode=0)
    return fake_run


def test_a_finished_pair_is_reused_not_rerun(transfer, tmp_path, monkeypatch):
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(tmp_path, {}))
    transfer.run_pair("STS-B", "random", _args(tmp_path))
    monkeypatch.setattr(transfer.subprocess, "run", lambda *a, **k: pytest.fail("a finished run was rerun"))
    assert transfer.run_pair("STS-B", "random", _args(tmp_path)) == str(tmp_path / "random" / "STS-B")


def test_another_checkpoint_is_compared_against_an_earlier_folders_random_runs(transfer, tmp_path, monkeypatch):
    earlier, later = tmp_path / "earlier", tmp_path / "later"
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(earlier, {}))
    transfer.run_pair("STS-B", "random", _args(earlier))
    monkeypatch.setattr(transfer.subprocess, "run", lambda *a, **k: pytest.fail("the random runs were redone"))
    args = _args(later, init_checkpoint="another_ckpt", random_dir=str(earlier))
    assert transfer.run_pair("STS-B", "random", args) == str(earlier / "random" / "STS-B")
    # Their flags are still checked: random runs of another recipe are not taken.
    with pytest.raises(RuntimeError, match="made with other flags"):
        transfer.run_pair("STS-B", "random", _args(later, random_dir=str(earlier), learning_rate=3e-5))
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(later, {}))
    assert transfer.run_pair("STS-B", "pretrained", args) == str(later / "pretrained" / "STS-B")


def test_a_finished_pair_made_with_other_flags_is_an_error_not_reused(transfer, tmp_path, monkeypatch):
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(tmp_path, {}))
    transfer.run_pair("SST-2", "random", _args(tmp_path))
    monkeypatch.setattr(transfer.subprocess, "run", lambda *a, **k: pytest.fail("an old run was silently redone"))
    with pytest.raises(RuntimeError, match=r"\(--learning_rate=0.0001 --learning_rate=3e-05\)"):
        transfer.run_pair("SST-2", "random", _args(tmp_path, learning_rate=3e-5))
    # SST-2's recipe once had 1,000 steps: such a run in the same folder must not enter the table.
    monkeypatch.setitem(transfer.RECIPE, "SST-2", (1000, 250))
    with pytest.raises(RuntimeError, match=r"made with other flags \(--train_step=6315 --warmup_step=631 "
                                           r"--save_checkpoints_steps=1053 --train_step=1000 --warmup_step=100 "
                                           r"--save_checkpoints_steps=250\)"):
        transfer.run_pair("SST-2", "random", _args(tmp_path))
    _write_run(tmp_path / "random" / "CoLA", [{"mcc": 0.1}], {})  # a run this script did not make
    with pytest.raises(RuntimeError, match="no transfer_flags.json"):
        transfer.run_pair("CoLA", "random", _args(tmp_path))


def test_another_recipes_run_is_a_one_line_error_from_the_script(tmp_path):
    _write_run(tmp_path / "pretrained" / "MRPC", [{"accuracy": 0.7}], {"accuracy": 0.68})
    with open(tmp_path / "pretrained" / "MRPC" / "transfer_flags.json", "w") as handle:
        json.dump(["--task_name=MRPC", "--train_step=345"], handle)
    result = subprocess.run([sys.executable, SCRIPT, "--init_checkpoint=x", "--albert_config_file=x",
                             f"--data_dir={tmp_path}", f"--output_dir={tmp_path}", "--tasks=MRPC",
                             "--starts=pretrained"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "made with other flags" in result.stderr
    assert "--train_step=345" in result.stderr and "--train_step=1150" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_run_gets_the_recipe_and_only_the_pretrained_start_the_checkpoint(transfer, tmp_path, monkeypatch):
    commands = {}
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(tmp_path, commands))
    args = _args(tmp_path, learning_rate=3e-5, max_seq_length=128)
    for start in transfer.START_NAMES:
        transfer.run_pair("MRPC", start, args)
    for start, command in commands.items():
        assert [arg for arg in command if arg.startswith("--max_seq_length")] == ["--max_seq_length=128"], start
        assert {"--learning_rate=3e-05", "--train_step=1150", "--warmup_step=115", "--seeds=3"} <= set(command)
        # No vocabulary flag unless one is given: earlier runs' transfer_flags.json stay reusable.
        assert not any(arg.startswith("--spm_model_file") for arg in command), start
    differ = set(commands["pretrained"]) ^ set(commands["random"])
    assert differ == {"--init_checkpoint=ckpt", f"--output_dir={tmp_path / 'pretrained' / 'MRPC'}",
                      f"--output_dir={tmp_path / 'random' / 'MRPC'}"}


def test_both_starts_tokenize_with_the_checkpoints_vocabulary(transfer, tmp_path, monkeypatch):
    commands = {}
    monkeypatch.setattr(transfer.subprocess, "run", _fake_run(tmp_path, commands))
    args = _args(tmp_path, spm_model_file="books8k.model")
    for start in transfer.START_NAMES:
        transfer.run_pair("CoLA", start, args)
    for start, command in commands.items():
        assert "--spm_model_file=books8k.model" in command, start
    # A run made with another vocabulary is another recipe: an error, not reused.
    with pytest.raises(RuntimeError, match="spm_model_file=books8k.model"):
        transfer.run_pair("CoLA", "random", _args(tmp_path, spm_model_file="other.model"))


def test_unknown_task_is_a_one_line_usage_error(tmp_path):
    result = subprocess.run([sys.executable, SCRIPT, "--init_checkpoint=x", "--albert_config_file=x",
                             f"--data_dir={tmp_path}", f"--output_dir={tmp_path}", "--tasks=SST-2,QQQ"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "unknown --tasks/--starts value(s): QQQ" in result.stderr
    assert "Traceback" not in result.stderr
