"""PNG figures of a run's curves, for a quick look without TensorBoard.

    albert-plot-metrics OUTPUT_DIR [--out_dir=DIR]
    albert-plot-metrics OUTPUT_DIR OUTPUT_DIR ... [--out_dir=DIR]

(`python -m albert_cli.plot_metrics ...` in a checkout.)

OUTPUT_DIR of `run_pretraining.py` (its `metrics.jsonl`): `pretraining_curves.png`, masked-LM and
sentence-order accuracy and loss by step, training against held-out, with sentence order's chance
level (0.5) dotted. OUTPUT_DIR of
`run_classifier.py` (its `eval_history.json`, or `seed_*/eval_history.json` with `--seeds`):
`fine_tuning_curves.png`, the training loss and every dev metric by step, one line per seed. Figures go to `--out_dir`
(default OUTPUT_DIR). Several pretraining OUTPUT_DIRs: `pretraining_comparison.png`, their held-out
curves side by side, a line per run named by its directory (default --out_dir: the first). matplotlib (the `plots` extra) is imported only when a figure is drawn.
"""

import glob
import os

from absl import flags

from albert_cli.cli import UsageError, run_main
from albert_cli.figures import matplotlib_module
from albert_tf.io_utils import atomic_open
from albert_tf.json_text import parse_json

METRICS_FILE = "metrics.jsonl"  # albert_tf.pretraining.metrics_log (not imported: it loads TensorFlow)
EVAL_HISTORY_FILE = "eval_history.json"  # albert_tf.training.evaluated_training
TRAIN_LOSS_KEY = "train_loss"  # albert_tf.training.evaluated_training: the one key that is not a dev metric
PRETRAINING_PANELS = ("masked_lm_accuracy", "sentence_order_accuracy", "masked_lm_loss", "sentence_order_loss")
SPLIT_LABELS = {"train": "training", "eval": "held-out"}
SENTENCE_ORDER_CHANCE = 0.5
COMPARISON_FILE = "pretraining_comparison.png"


def read_jsonl(path):
    """The records of a JSON-lines file; a line that is not JSON is a ValueError naming its number."""
    records = []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(parse_json(line))
            except ValueError as error:  # not JSON, or not UTF-8
                reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else getattr(error, "msg", error)
                raise ValueError(f"{path}: line {number} is not JSON ({reason})") from None
    return records


def _pyplot():
    matplotlib_module().use("Agg")
    return matplotlib_module("matplotlib.pyplot")


def _save(figure, path):
    """The figure as a PNG at `path`, whole or not at all; a link planted there is replaced, never written through."""
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=100)


def _numeric(records, name):
    """(steps, values) of the records that carry `name` as a number (NaN is written as a string)."""
    points = [(r["step"], r[name]) for r in records if isinstance(r.get(name), (int, float))]
    return [p[0] for p in points], [p[1] for p in points]


def pretraining_figure(plt, curves):
    """One panel per metric, one line per curve; `curves` maps a label to `metrics.jsonl` records
    of one split (held-out ones get markers). Returns (figure, axes by metric name)."""
    figure, axes = plt.subplots(2, 2, figsize=(10, 7))
    panels = dict(zip(PRETRAINING_PANELS, axes.flat))
    for name, axis in panels.items():
        for label, records in curves.items():
            steps, values = _numeric(records, name)
            if steps:
                held_out = records[0].get("split") == "eval"
                axis.plot(steps, values, marker="o" if held_out else None, markersize=3, label=label)
        axis.set(title=name.replace("_", " "), xlabel="step")
        axis.grid(alpha=0.3)
    # metrics.jsonl does not record the data's label balance: 0.5 is the floor of balanced labels
    # (the data's commoner label can be a little higher). A short label: a long one widens the
    # legend past its panel and squeezes the figure.
    panels["sentence_order_accuracy"].axhline(SENTENCE_ORDER_CHANCE, color="grey", linestyle=":",
                                              label="0.5, chance (balanced labels)")
    for axis in panels.values():
        axis.legend(fontsize="small")
    figure.tight_layout()
    return figure, panels


def split_curves(records):
    """One run's curves: {"training": its training records, "held-out": its evaluations}."""
    return {label: [r for r in records if r.get("split") == split] for split, label in SPLIT_LABELS.items()}


def plot_pretraining(curves, path):
    """`pretraining_figure(curves)` as a PNG at `path`."""
    plt = _pyplot()
    figure, _ = pretraining_figure(plt, curves)
    _save(figure, path)
    plt.close(figure)


def plot_fine_tuning(histories, path):
    """The training loss, then dev metrics, by step; `histories` maps a run's name to its
    `eval_history.json` list."""
    plt = _pyplot()
    keys = {key for history in histories.values() for record in history for key in record}
    names = [TRAIN_LOSS_KEY] * (TRAIN_LOSS_KEY in keys) + sorted(keys - {"step", TRAIN_LOSS_KEY})
    figure, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.5), squeeze=False)
    for axis, name in zip(axes.flat, names):
        for run, history in sorted(histories.items()):
            steps, values = _numeric(history, name)
            axis.plot(steps, values, marker="o", markersize=3, label=run)
        axis.set(title="training loss (mean since the last evaluation)" if name == TRAIN_LOSS_KEY else f"dev {name}",
                 xlabel="step")
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)


def _eval_histories(output_dir):
    paths = sorted(glob.glob(os.path.join(output_dir, "seed_*", EVAL_HISTORY_FILE)))
    if os.path.isfile(os.path.join(output_dir, EVAL_HISTORY_FILE)):
        paths.insert(0, os.path.join(output_dir, EVAL_HISTORY_FILE))
    histories = {}
    for path in paths:
        with open(path) as handle:
            try:
                histories[os.path.basename(os.path.dirname(path))] = parse_json(handle.read())
            except ValueError as error:
                raise ValueError(f"{path}: not JSON ({getattr(error, 'msg', error)})") from None
    return histories


def _make_out_dir(out_dir):
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"--out_dir {out_dir} is a file, not a directory")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:  # a file on its path, a read-only disk
        raise ValueError(f"--out_dir {out_dir}: cannot create it ({error.strerror or error})") from None


def plot_metrics(output_dir, out_dir=None):
    """Draws the figures of `output_dir`'s run into `out_dir` (default `output_dir`); returns their
    paths. FileNotFoundError when it holds neither `metrics.jsonl` nor an `eval_history.json`."""
    if not os.path.isdir(output_dir):
        raise FileNotFoundError(f"OUTPUT_DIR {output_dir} is not a directory")
    out_dir = out_dir or output_dir
    written = []
    metrics_path = os.path.join(output_dir, METRICS_FILE)
    if os.path.isfile(metrics_path):
        records = read_jsonl(metrics_path)
        if not records:
            raise ValueError(f"{metrics_path} has no records yet (the run writes one per --iterations_per_loop)")
        _make_out_dir(out_dir)
        written.append(os.path.join(out_dir, "pretraining_curves.png"))
        plot_pretraining(split_curves(records), written[-1])
    histories = _eval_histories(output_dir)
    if histories:
        _make_out_dir(out_dir)
        written.append(os.path.join(out_dir, "fine_tuning_curves.png"))
        plot_fine_tuning(histories, written[-1])
    if not written:
        raise FileNotFoundError(
            f"{output_dir} has no {METRICS_FILE} (run_pretraining.py --output_dir) and no "
            f"{EVAL_HISTORY_FILE} (run_classifier.py --output_dir, also under seed_*/)")
    return written


def compare_pretraining(output_dirs, out_dir):
    """The held-out curves of several pretraining runs in one figure, a line per run named by its
    directory (the same run on each backend, say), at `out_dir`/pretraining_comparison.png."""
    curves = {}
    for output_dir in output_dirs:
        path = os.path.join(output_dir, METRICS_FILE)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"OUTPUT_DIR {output_dir} has no {METRICS_FILE} (run_pretraining.py --output_dir)")
        name = os.path.basename(os.path.normpath(output_dir))
        if name in curves:
            raise ValueError(f"OUTPUT_DIR {output_dir}: another run is named {name!r} too; the figure names each "
                             f"run by its directory's name")
        curves[name] = split_curves(read_jsonl(path))["held-out"]
        if not curves[name]:
            raise ValueError(f"{path} has no held-out evaluations (run_pretraining.py --do_eval)")
    _make_out_dir(out_dir)
    written = os.path.join(out_dir, COMPARISON_FILE)
    plot_pretraining(curves, written)
    return written


FLAGS = flags.FLAGS
flags.DEFINE_string("out_dir", None, "Where the PNG files go (default: OUTPUT_DIR).")


def main(argv):
    if len(argv) < 2:
        raise UsageError("usage: albert-plot-metrics OUTPUT_DIR [OUTPUT_DIR ...] [--out_dir=DIR] "
                         "(python -m albert_cli.plot_metrics in a checkout)")
    if len(argv) == 2:
        written = plot_metrics(argv[1], FLAGS.out_dir)
    else:
        written = [compare_pretraining(argv[1:], FLAGS.out_dir or argv[1])]
    for path in written:
        print(path)


def console_main():
    """The `albert-plot-metrics` command (`python -m albert_cli.plot_metrics`)."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
