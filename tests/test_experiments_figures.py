"""The experiments' figures: the commoner-label rate drawn and named, names that do not overprint,
an axis that shows the noise, and the committed figures' numbers equal to docs/paper_experiments.md."""

import json
import os

import pytest

from albert_cli.experiments import comparison, report, sop_vs_nsp
from tests.experiments_test_data import png_size
from tests.test_experiments_cli import REPO_ROOT, _run
from tests.test_experiments_paper import _doc_tables

FIGURES_DIR = os.path.join(REPO_ROOT, "docs", "paper_experiments")
DRAW = {"sharing": comparison.draw, "embedding_size": comparison.draw, "sop_vs_nsp": sop_vs_nsp.draw}


def _recorded(name):
    with open(os.path.join(FIGURES_DIR, f"{name}.json")) as handle:
        return json.load(handle)


def _overlapping(texts):
    boxes = [text.get_window_extent() for text in texts if text.get_text()]
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]


def _dotted_levels(axes):
    return {round(line.get_xdata()[0], 4): line.get_label() for line in axes.get_lines() if line.get_linestyle() == ":"}


@pytest.mark.parametrize("name", sorted(DRAW))
def test_names_and_ticks_do_not_overprint(name):
    figure = DRAW[name](_recorded(name))
    figure.canvas.draw()
    for axes in figure.axes:
        assert not _overlapping(axes.get_yticklabels()), name
        assert not _overlapping(axes.get_xticklabels()), name
    first = _recorded(name)[0]
    expected = sop_vs_nsp._trained(first) if name == "sop_vs_nsp" else first["variants"]
    assert [label.get_text() for label in figure.axes[0].get_yticklabels()] == [row["variant"] for row in expected]


def test_sharing_figure_draws_each_floor_and_the_noise():
    runs = _recorded("sharing")
    mlm, sop, dev = comparison.draw(runs).axes
    assert _dotted_levels(dev) == {0.6838: "always the commoner label (seed 12345): 0.6838"}
    assert set(_dotted_levels(sop)) == {0.5219, 0.5414}  # each seed's held-out file
    assert not _dotted_levels(mlm)
    for axes, key, count in ((mlm, "heldout_masked_lm_accuracy", "masked_lm_predictions"), (dev, "dev_score", "dev_examples")):
        values = [row[key] for row in runs[0]["variants"]]
        error = max(report.binomial_error(value, runs[0]["counts"][count]) for value in values)
        low, high = axes.get_xlim()
        assert low <= min(values) - error and max(values) + error <= high  # the error bars are on the axis
        assert high - low < 6 * error + (max(values) - min(values))  # and the axis is not much wider
    low, high = dev.get_xlim()
    assert low < 0.6838 < high
    # the second seed: hollow points, on the panels it measured
    assert [line.get_label() for line in sop.get_lines() if line.get_markerfacecolor() == "none"] == ["seed 23456"]
    assert not [line for line in dev.get_lines() if line.get_markerfacecolor() == "none"]


def test_sop_vs_nsp_figure_names_its_dotted_lines():
    nsp, sop = sop_vs_nsp.draw(_recorded("sop_vs_nsp")).axes[1:3]
    for axes, level in ((nsp, 0.5398), (sop, 0.5219)):
        assert _dotted_levels(axes)[level] == f"always the commoner label (seed 12345): {level:.4f}"
        legend = [text.get_text() for text in axes.get_legend().get_texts()]
        assert all(label in legend for label in _dotted_levels(axes).values())


def _section(tables, prefix):
    return next(rows for name, rows in tables.items() if name and name.startswith(prefix))


def test_the_recorded_numbers_are_the_docs_tables():
    tables = _doc_tables()
    for name, prefix, columns in (
            ("sharing", "Cross-layer sharing", {"held-out MLM acc": "heldout_masked_lm_accuracy",
                                                "held-out SOP acc": "heldout_sentence_order_accuracy",
                                                "MRPC dev acc": "dev_score"}),
            ("embedding_size", "Embedding size", {"held-out MLM acc": "heldout_masked_lm_accuracy",
                                                  "held-out SOP acc": "heldout_sentence_order_accuracy",
                                                  "MRPC dev acc": "dev_score"})):
        rows = {row["variant"]: row for row in _recorded(name)[0]["variants"]}
        table = _section(tables, prefix)
        assert [cells["variant"] for cells in table] == list(rows)
        for cells in table:
            assert {key: float(cells[column]) for column, key in columns.items()} == \
                {key: rows[cells["variant"]][key] for key in columns.values()}
    rows = {row["variant"]: row for row in _recorded("sop_vs_nsp")[0]["variants"]}
    columns = {"held-out MLM": "mlm_accuracy", "held-out NSP": "nsp_accuracy", "held-out SOP": "sop_accuracy",
               "MRPC dev": "dev_score"}
    for cells in _section(tables, "Sentence-pair loss")[:3]:
        shown = [float(cells[column].strip("*%")) for column in columns]
        recorded = [100 * rows[cells["pretrained with"]][key] for key in columns.values()]
        assert shown == pytest.approx(recorded, abs=0.05 + 1e-9), cells  # the table's one decimal


def test_redraw_writes_the_figure(tmp_path):
    result = _run(["sharing", f"--redraw={os.path.join(FIGURES_DIR, 'sharing.json')}", f"--output_dir={tmp_path}"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert png_size(str(tmp_path / "figure.png"))[0] > 500
