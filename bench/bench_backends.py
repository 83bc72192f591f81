"""Ours vs keras-hub's `AlbertBackbone` on each Keras backend (TensorFlow, JAX, PyTorch), same shapes.

One `bench/accelerator_step.py` process per backend (a process has one backend), one after the
other in one run; inside each, ours and keras-hub's training step and batch inference are timed in
interleaved rounds. Prints a markdown table: our kernel set, time per step, GFLOP/s, and keras-hub's
time over ours (above 1: ours is faster). Ours runs with what the commands' `--kernels=auto` picks on
each backend unless `--kernels` names one set (`reference`: the plain path, the same on all three).
When a backend's run fails, keras-hub is measured alone there and our model's error (its last line)
is printed under the table.

    python bench/bench_backends.py                                  # albert-base, batch 8 / 32, seq 128
    python bench/bench_backends.py --train_batch 2 --infer_batch 4 --seq 64 --steps 3
"""

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench._common import failure_lines, run_side_by_side  # noqa: E402
from bench.accelerator_step import add_workload_flags, comma_list  # noqa: E402

BACKENDS = ("tensorflow", "jax", "torch")
STEP_SCRIPT = os.path.join(REPO, "bench", "accelerator_step.py")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, from tensorflow,jax,torch")
    add_workload_flags(parser)
    parser.add_argument("--json", help="also write every backend's results here")
    args = parser.parse_args(argv)
    args.backends = comma_list(parser, "backends", args.backends, BACKENDS)
    return args


def measure(backend, args, directory):
    """Both systems on `backend`; after a failure keras-hub alone, with the failure's line as "error"."""
    report = run_backend(backend, args, directory, "ours,keras_hub")
    if "error" in report:
        report = dict(run_backend(backend, args, directory, "keras_hub"), error=report["error"])
    return report


def run_backend(backend, args, directory, systems):
    """accelerator_step.py's results on `backend`, or {"error": its last stderr line}."""
    results = os.path.join(directory, f"{backend}.json")
    command = [sys.executable, STEP_SCRIPT, "--json", results, "--kernels", args.kernels, "--systems", systems]
    for flag in ("config", "train_batch", "infer_batch", "seq", "masked", "steps"):
        command += [f"--{flag}", str(getattr(args, flag))]
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3"))
    print(f"{backend}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    process = subprocess.run(command, env=env, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    if process.returncode:
        lines = [line for line in process.stderr.splitlines() if line.strip()]
        return {"backend": backend, "device": backend, "rows": [],
                "error": lines[-1] if lines else f"exit {process.returncode}"}
    with open(results) as f:
        return json.load(f)


def table(reports):
    """Markdown rows: backend, kind, our kernels, ours and keras-hub's ms/step and GFLOP/s, keras-hub / ours."""
    lines = ["| backend (device) | case | ours' kernels | ours ms/step | keras-hub ms/step | ours GFLOP/s "
             "| keras-hub GFLOP/s | keras-hub time / ours |", "|---|---|---|---|---|---|---|---|"]
    for report in reports:
        rows = {(row["system"], row["kind"]): row for row in report["rows"]}
        for kind in ("train", "infer") if rows else ():
            ours, hub = rows.get(("ours", kind)), rows.get(("keras_hub", kind))

            def cell(row, key, scale, digits):
                return f"{row[key] * scale:.{digits}f}" if row else "-"

            ratio = f"{hub['seconds_per_step'] / ours['seconds_per_step']:.2f}" if ours and hub else "-"
            lines.append(f"| {report['device']} | {kind} {(ours or hub)['batch']} x {(ours or hub)['seq']} "
                         f"| {report.get('kernels', '-') if ours else '-'} "
                         f"| {cell(ours, 'seconds_per_step', 1e3, 1)} | {cell(hub, 'seconds_per_step', 1e3, 1)} "
                         f"| {cell(ours, 'tflops_per_second', 1e3, 2)} | {cell(hub, 'tflops_per_second', 1e3, 2)} "
                         f"| {ratio} |")
    return "\n".join(lines + failure_lines(reports))


def main(argv=None):
    args = parse_args(argv)
    return run_side_by_side(lambda directory: [measure(backend, args, directory) for backend in args.backends],
                            table, args.json)


if __name__ == "__main__":
    main()
