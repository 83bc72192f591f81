"""docs/results.md's bundled run on each backend: every number of its tables is the one the runs'
records in bench/results/bundled_backends/ give: <backend>/metrics.jsonl (the training run) and, on
JAX and PyTorch, <backend>/heldout/step-<N>.jsonl (the held-out evaluation of its checkpoint N,
re-run after the evaluation fix: the training runs' own were of one batch until then)."""

import glob
import json
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(REPO, "bench", "results", "bundled_backends")
SECTION = "## The bundled run on each backend"
BACKENDS = ("tensorflow", "jax", "torch")
HELD_OUT = ("masked_lm_accuracy", "masked_lm_loss", "sentence_order_accuracy", "sentence_order_loss")


def records(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def training_run(backend):
    return records(os.path.join(RECORDS, backend, "metrics.jsonl"))


def held_out(backend):
    """[(step, the held-out record)]: the run's own on TensorFlow; elsewhere the re-run evaluations
    (a run from --init_checkpoint starts its own count at 0: the step is the file's), then the
    run's own after the last of them (PyTorch's run, resumed with the fix after step 200)."""
    own = [(r["step"], r) for r in training_run(backend) if r["split"] == "eval"]
    if backend == "tensorflow":
        return own
    steps = []
    for path in glob.glob(os.path.join(RECORDS, backend, "heldout", "step-*.jsonl")):
        [record] = [r for r in records(path) if r["split"] == "eval"]
        steps.append((int(re.search(r"step-(\d+)", path).group(1)), record))
    steps.sort(key=lambda pair: pair[0])
    return steps + [(step, record) for step, record in own if step > steps[-1][0]]


def timed_steps_per_second(training):
    """The run's own rate (its summary's examples/s over the batch): the loops after the first
    (tracing, XLA), each record's steps over its seconds."""
    steps = [later["step"] - earlier["step"] for earlier, later in zip(training, training[1:])]
    seconds = [done / record["steps_per_second"] for done, record in zip(steps, training[1:])]
    return sum(steps) / sum(seconds)


def section_rows():
    with open(os.path.join(REPO, "docs", "results.md")) as handle:
        text = handle.read()
    section = text[text.index(SECTION):]
    section = section[:section.find("\n## ", 1)]
    return [line for line in section.splitlines() if line.startswith("| ")]


def test_the_side_by_side_table_is_the_runs_records():
    rows = section_rows()
    for backend in BACKENDS:
        evaluations = held_out(backend)
        (_, first), (last_step, last) = evaluations[0], evaluations[-1]
        cells = [f"{first[name]:.3f} → {last[name]:.3f}" for name in HELD_OUT]
        training = [r for r in training_run(backend) if r["split"] == "train"]
        steps_per_second = timed_steps_per_second(training)
        expected = (f"| {backend} | {last_step} of {training[-1]['step']} | " + " | ".join(cells)
                    + f" | {steps_per_second:.2f} |")
        assert expected in rows, (expected, rows)


def test_the_evaluation_rows_are_the_runs_records():
    rows = section_rows()
    for backend in BACKENDS:
        evaluations = held_out(backend)
        for name, label in (("masked_lm_accuracy", "masked-LM accuracy"), ("sentence_order_accuracy",
                                                                           "sentence-order accuracy")):
            expected = f"| {backend}, {label} | " + " | ".join(f"{r[name]:.3f}" for _, r in evaluations) + " |"
            assert expected in rows, (expected, rows)
