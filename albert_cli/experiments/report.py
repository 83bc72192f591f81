"""An experiment's outputs: results.json (everything measured), results.md (a table), figure.png."""

import json
import os

from albert_cli.experiments.setup import FIGURE_PNG, RESULTS_JSON, RESULTS_MD
from albert_cli.figures import matplotlib_module
from albert_tf.io_utils import atomic_open


def new_figure(num_axes=1):
    """A figure with `num_axes` side-by-side axes (no pyplot: no global state, no display)."""
    figure = matplotlib_module("matplotlib.figure").Figure(figsize=(5 * num_axes, 3.6), layout="constrained")
    axes = figure.subplots(1, num_axes, squeeze=False)[0]
    return figure, list(axes)


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


def write_outputs(output_dir, title, results, table, figure, notes=""):
    """Writes the three files into `output_dir`; returns their paths. Each appears whole or not at all."""
    os.makedirs(output_dir, exist_ok=True)
    paths = {name: os.path.join(output_dir, name) for name in (RESULTS_JSON, RESULTS_MD, FIGURE_PNG)}
    with atomic_open(paths[RESULTS_JSON]) as handle:
        json.dump(results, handle, indent=2, sort_keys=True)
        handle.write("\n")
    with atomic_open(paths[RESULTS_MD]) as handle:
        handle.write(f"# {title}\n\n{table}\n{notes}")
    with atomic_open(paths[FIGURE_PNG], "wb") as handle:
        figure.savefig(handle, format="png", dpi=80)
    return paths
