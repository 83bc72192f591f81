"""`python -m albert_cli.plot_metrics`: figures from a run's metrics, one-line errors."""

import json
import os
import subprocess
import sys

import pytest

from albert_cli import plot_metrics as plot_metrics_module
from albert_cli.plot_metrics import plot_metrics, read_jsonl

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _write_pretraining_metrics(output_dir):
    records = [{"step": 0, "split": "eval", "masked_lm_accuracy": 0.0, "masked_lm_loss": 10.3,
                "sentence_order_accuracy": 0.5, "sentence_order_loss": 0.69, "loss": 11.0}]
    for step in (10, 20):
        records.append({"step": step, "split": "train", "masked_lm_accuracy": step / 100,
                        "masked_lm_loss": 8.0 - step / 10, "sentence_order_accuracy": 0.6,
                        "sentence_order_loss": "nan", "loss": 9.0, "learning_rate": 0.01})
    records.append(dict(records[0], step=20, masked_lm_accuracy=0.1))
    with open(os.path.join(output_dir, "metrics.jsonl"), "w") as handle:
        handle.write("".join(json.dumps(record) + "\n" for record in records))


def _is_png(path):
    with open(path, "rb") as handle:
        return handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_pretraining_and_fine_tuning_figures(tmp_path):
    _write_pretraining_metrics(tmp_path)
    for seed in (1, 2):
        os.makedirs(tmp_path / f"seed_{seed}")
        history = [{"step": 5, "accuracy": 0.5 + seed / 10}, {"step": 10, "accuracy": 0.7}]
        (tmp_path / f"seed_{seed}" / "eval_history.json").write_text(json.dumps(history))
    written = plot_metrics(str(tmp_path), str(tmp_path / "figures"))
    assert [os.path.basename(path) for path in written] == ["pretraining_curves.png", "fine_tuning_curves.png"]
    assert all(_is_png(path) and os.path.getsize(path) > 1000 for path in written)


def test_the_sentence_order_panel_draws_its_chance_level(tmp_path):
    _write_pretraining_metrics(tmp_path)
    plt = plot_metrics_module._pyplot()
    curves = plot_metrics_module.split_curves(read_jsonl(str(tmp_path / "metrics.jsonl")))
    figure, panels = plot_metrics_module.pretraining_figure(plt, curves)
    dotted = {name: [line for line in axis.get_lines() if line.get_linestyle() == ":"] for name, axis in panels.items()}
    assert [list(line.get_ydata()) for line in dotted.pop("sentence_order_accuracy")] == [[0.5, 0.5]]
    assert not any(dotted.values())  # only that panel has a floor
    legend = [text.get_text() for text in panels["sentence_order_accuracy"].get_legend().get_texts()]
    assert any(label.startswith("0.5, chance") for label in legend)
    low, high = panels["sentence_order_accuracy"].get_ylim()
    assert low < 0.5 < high
    plt.close(figure)


def test_several_runs_are_compared_by_their_held_out_curves_one_line_each(tmp_path):
    runs = [tmp_path / backend for backend in ("tensorflow", "jax")]
    for run in runs:
        run.mkdir()
        _write_pretraining_metrics(run)
    done = subprocess.run([sys.executable, "-m", "albert_cli.plot_metrics", *map(str, runs),
                           f"--out_dir={tmp_path / 'figures'}"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "figures" / "pretraining_comparison.png")
    assert _is_png(done.stdout.strip()) and sorted(os.listdir(runs[0])) == ["metrics.jsonl"]
    plt = plot_metrics_module._pyplot()
    held_out = plot_metrics_module.split_curves(read_jsonl(str(runs[0] / "metrics.jsonl")))["held-out"]
    figure, panels = plot_metrics_module.pretraining_figure(plt, {"tensorflow": held_out, "jax": held_out})
    solid = [line for line in panels["masked_lm_accuracy"].get_lines() if line.get_linestyle() != ":"]
    assert [line.get_label() for line in solid] == ["tensorflow", "jax"]
    assert [list(line.get_xdata()) for line in solid] == [[0, 20], [0, 20]]  # the evaluations only
    plt.close(figure)


def test_a_compared_run_without_held_out_evaluations_or_with_a_twin_name_is_an_error(tmp_path):
    (tmp_path / "a").mkdir()
    _write_pretraining_metrics(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "metrics.jsonl").write_text(json.dumps({"step": 10, "split": "train", "loss": 9.0}) + "\n")
    with pytest.raises(ValueError, match="b/metrics.jsonl has no held-out evaluations"):
        plot_metrics_module.compare_pretraining([str(tmp_path / "a"), str(tmp_path / "b")], str(tmp_path))
    with pytest.raises(ValueError, match="another run is named 'a' too"):
        plot_metrics_module.compare_pretraining([str(tmp_path / "a"), str(tmp_path / "a") + "/"], str(tmp_path))
    assert not (tmp_path / "pretraining_comparison.png").exists()


def test_directory_without_metrics_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="metrics.jsonl"):
        plot_metrics(str(tmp_path))
    (tmp_path / "metrics.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1 is not JSON"):
        plot_metrics(str(tmp_path))


def test_a_damaged_line_is_named_by_its_own_number(tmp_path):
    _write_pretraining_metrics(tmp_path)
    lines = (tmp_path / "metrics.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "metrics.jsonl").write_bytes(lines[0] + b'{"step": 5, "spl\n' + b"".join(lines[1:]))
    with pytest.raises(ValueError, match="metrics.jsonl: line 2 is not JSON"):
        plot_metrics(str(tmp_path))
    (tmp_path / "metrics.jsonl").write_bytes(b"".join(lines[:3]) + b'{"step": 30, "split": "\xff"}\n')
    with pytest.raises(ValueError, match=r"metrics.jsonl: line 4 is not JSON \(not UTF-8 text\)"):
        plot_metrics(str(tmp_path))


@pytest.mark.parametrize("out_dir", ["a_file", "a_file/sub"])
def test_an_out_dir_that_is_a_file_is_one_line_and_nothing_is_written(tmp_path, out_dir):
    _write_pretraining_metrics(tmp_path)
    (tmp_path / "a_file").write_text("kept")
    failed = subprocess.run([sys.executable, "-m", "albert_cli.plot_metrics", str(tmp_path),
                             f"--out_dir={tmp_path / out_dir}"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.startswith("error: --out_dir") and failed.stderr.count("\n") == 1, failed.stderr
    assert "a_file" in failed.stderr and "not a directory" in failed.stderr.lower(), failed.stderr
    assert (tmp_path / "a_file").read_text() == "kept"
    assert sorted(os.listdir(tmp_path)) == ["a_file", "metrics.jsonl"]


def test_script_writes_figures_and_reports_errors_in_one_line(tmp_path):
    _write_pretraining_metrics(tmp_path)
    command = [sys.executable, "-m", "albert_cli.plot_metrics"]
    done = subprocess.run(command + [str(tmp_path)], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "pretraining_curves.png")
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = subprocess.run(command + [str(empty)], cwd=REPO_ROOT, capture_output=True, text=True)
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1
    assert "metrics.jsonl" in failed.stderr and "Traceback" not in failed.stderr


def test_without_matplotlib_the_script_says_what_to_install(tmp_path):
    _write_pretraining_metrics(tmp_path)
    hide_matplotlib = ("import runpy, sys; sys.modules['matplotlib'] = None; "
                       "sys.argv = ['plot_metrics', sys.argv[1]]; runpy.run_module('albert_cli.plot_metrics', run_name='__main__')")
    failed = subprocess.run([sys.executable, "-c", hide_matplotlib, str(tmp_path)], cwd=REPO_ROOT,
                            capture_output=True, text=True)
    assert failed.returncode == 2, failed.stderr
    assert failed.stderr == "error: drawing figures needs matplotlib, an optional extra: pip install 'albert-tf[plots]' (or pip install matplotlib)\n"
    assert not (tmp_path / "pretraining_curves.png").exists()


def test_help_and_usage_name_the_installed_command():
    command = [sys.executable, "-m", "albert_cli.plot_metrics"]
    shown = subprocess.run(command + ["--help"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert shown.returncode == 0 and "    albert-plot-metrics OUTPUT_DIR [--out_dir=DIR]\n" in shown.stdout, shown.stdout
    failed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    assert failed.returncode == 2 and failed.stderr.startswith("error: usage: albert-plot-metrics OUTPUT_DIR"), failed.stderr


def test_a_link_planted_in_the_output_directory_is_replaced_not_written_through(tmp_path):
    (tmp_path / "eval_history.json").write_text(json.dumps([{"step": 5, "accuracy": 0.5}]))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, tmp_path / "fine_tuning_curves.png")
    [written] = plot_metrics(str(tmp_path))
    assert victim.read_text() == "keep me"
    assert not os.path.islink(written) and _is_png(written)
    assert sorted(os.listdir(tmp_path)) == ["eval_history.json", "fine_tuning_curves.png", "victim.txt"]
