"""An experiment's outputs: results.json (everything measured), results.md (a table), figure.png."""

import dataclasses
import json
import math
import os

from albert_cli.experiments.setup import FIGURE_PNG, RESULTS_JSON, RESULTS_MD
from albert_cli.figures import matplotlib_module
from albert_tf.io_utils import atomic_open


def new_figure(num_axes=1):
    """A figure with `num_axes` side-by-side axes (no pyplot: no global state, no display)."""
    figure = matplotlib_module("matplotlib.figure").Figure(figsize=(5 * num_axes, 3.6), layout="constrained")
    axes = figure.subplots(1, num_axes, squeeze=False)[0]
    return figure, list(axes)


@dataclasses.dataclass(frozen=True)
class Panel:
    """One accuracy of an accuracy figure: the rows' `key`, the `results["counts"]` entry that says
    over how many predictions it was measured (its error bar), and `majority(results)`, the accuracy
    of always answering the commoner label (None: the panel has no such floor)."""

    key: str
    title: str
    count: str
    majority: object = None


def binomial_error(accuracy, count):
    """The standard error of an accuracy measured over `count` independent predictions."""
    return math.sqrt(accuracy * (1.0 - accuracy) / count)


def accuracy_figure(runs, panels, rows_of=lambda results: results["variants"]):
    """Variants as rows (named once, on the left: names never overprint), one panel per accuracy.

    `runs`: the results of one or more seeds. The first run is drawn with +-1 binomial standard
    error, the others as hollow points; each run's commoner-label rate is a dotted line, named in
    the legend. The axis spans the points, their error bars and the dotted lines, so a difference
    is seen against the noise and the floor. Returns (figure, axes).
    """
    names = [row["variant"] for row in rows_of(runs[0])]
    positions = list(range(len(names)))
    figure = matplotlib_module("matplotlib.figure").Figure(
        figsize=(1.6 + 3.2 * len(panels), 1.9 + 0.35 * len(names)), layout="constrained")
    all_axes = list(figure.subplots(1, len(panels), sharey=True, squeeze=False)[0])
    for axes, panel in zip(all_axes, panels):
        span = []
        for index, results in enumerate(runs):
            seed = f"seed {results['setup']['seed']}"
            if index == 0:
                points = [row[panel.key] for row in rows_of(results)]
                errors = [binomial_error(value, results["counts"][panel.count]) for value in points]
                axes.errorbar(points, positions, xerr=errors, fmt="o", color="C0", capsize=3,
                              label=f"{seed}, ±1 standard error")
                span += [value - error for value, error in zip(points, errors)]
                span += [value + error for value, error in zip(points, errors)]
            else:  # a seed that measured only some accuracies (or variants) shows those
                values = {row["variant"]: row[panel.key] for row in rows_of(results) if panel.key in row}
                shown = [(values[name], position) for name, position in zip(names, positions) if name in values]
                if shown:
                    axes.plot(*zip(*shown), "o", color=f"C{index}", markerfacecolor="none", label=seed)
                    span += [value for value, _ in shown]
            level = panel.majority(results) if panel.majority else None
            if level is not None:
                axes.axvline(level, color="grey" if index == 0 else f"C{index}", linestyle=":", linewidth=1.5,
                             label=f"always the commoner label ({seed}): {level:.4f}")
                span.append(level)
        margin = 0.08 * (max(span) - min(span)) or 0.01  # (one value everywhere: a tiny run's 0.0 or 1.0)
        axes.set(title=panel.title, xlim=(min(span) - margin, max(span) + margin))
        axes.xaxis.set_major_locator(matplotlib_module("matplotlib.ticker").MaxNLocator(nbins=5))
        axes.grid(axis="x", alpha=0.3)
        axes.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.12))
    all_axes[0].set_yticks(positions, names)
    all_axes[0].set_ylim(len(names) - 0.5, -0.5)  # the first variant on top, as in the table
    return figure, all_axes


def markdown_table(columns, rows):
    """`rows` (dicts) as a Markdown table of `columns` ((key, heading) pairs); floats to 4 digits."""

    def cell(value):
        if isinstance(value, float):
            return f"{value:.4f}"
        return "" if value is None else f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(heading for _, heading in columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(key)) for key, _ in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def save_figure(figure, path):
    """`figure` as a PNG at `path`, whole or not at all."""
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=80)


def write_outputs(output_dir, title, results, table, figure, notes=""):
    """Writes the three files into `output_dir`; returns their paths. Each appears whole or not at all."""
    os.makedirs(output_dir, exist_ok=True)
    paths = {name: os.path.join(output_dir, name) for name in (RESULTS_JSON, RESULTS_MD, FIGURE_PNG)}
    with atomic_open(paths[RESULTS_JSON]) as handle:
        json.dump(results, handle, indent=2, sort_keys=True)
        handle.write("\n")
    with atomic_open(paths[RESULTS_MD]) as handle:
        handle.write(f"# {title}\n\n{table}\n{notes}")
    save_figure(figure, paths[FIGURE_PNG])
    return paths
