"""Pretraining steps per second on each Keras backend (TensorFlow, JAX, PyTorch), side by side in one run.

Each backend trains in its own process (a process has one backend) with the trainer
`run_pretraining.py` uses there: `PretrainingTrainer` (the `tf.distribute` loop) on TensorFlow,
`KerasPretrainingTrainer` (Keras' train step, jitted on JAX, eager on PyTorch) elsewhere, with the
command's defaults (`--kernels=auto`, LAMB, clipping at 1.0, the config's dropout). Every backend
gets the same config, global batch, sequence length and random batch, fed through tf.data as the
command feeds it, with no TFRecords. Each process runs one untimed loop (tracing, XLA), then the
processes take turns, one loop each per round (`bench/_common.py`'s interleaved rounds), so that a
burst of load from elsewhere hits every backend alike. Prints a markdown table: steps/s and
examples/s (median round), CPU seconds per step, and steps/s over TensorFlow's.

    python bench/bench_pretraining_backends.py                       # albert-base, batch 8, seq 128
    python bench/bench_pretraining_backends.py --config configs/albert_tiny.json --batch 32 --seq 64 --masked 10
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from bench._common import failure_lines, interleaved_medians, median, run_side_by_side  # noqa: E402
from bench.accelerator_step import check_shape_flags, comma_list, device_name  # noqa: E402
from bench.albert_workload import BASE_CONFIG, make_inputs  # noqa: E402

BACKENDS = ("tensorflow", "jax", "torch")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, from tensorflow,jax,torch")
    parser.add_argument("--config", default=BASE_CONFIG, help="an albert_config.json (default: albert-base)")
    parser.add_argument("--batch", type=int, default=8, help="the global batch (sequences per step)")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--masked", type=int, default=20, help="masked positions per sequence")
    parser.add_argument("--steps_per_loop", type=int, default=2, help="steps per timed loop (--iterations_per_loop)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (each runs one loop on every backend)")
    parser.add_argument("--kernels", default="auto", help="the kernel set, decided per backend as the command does")
    parser.add_argument("--json", help="also write every backend's results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.backends = comma_list(parser, "backends", args.backends, BACKENDS)
    check_shape_flags(parser, args, ("batch", "seq", "steps_per_loop", "rounds"))
    if not os.path.isfile(args.config):
        parser.error(f"--config: no file {args.config}")
    return args


# --- One backend (this file with --worker, KERAS_BACKEND set) ----------------------------------

def pretraining_trainer(config, settings):
    """The trainer `run_pretraining.py` builds on this backend, on one device."""
    import keras

    if keras.backend.backend() == "tensorflow":
        from albert_tf.pretraining.trainer import PretrainingTrainer
        from albert_tf.training import distribute

        return PretrainingTrainer(distribute.get_strategy("one_device"), config, settings)
    import tensorflow as tf

    from albert_tf.pretraining.keras_trainer import KerasPretrainingTrainer

    tf.config.set_visible_devices([], "GPU")  # as the command: TensorFlow only feeds the backend
    return KerasPretrainingTrainer(config, settings)


def worker(args):
    """Trains one untimed loop and says so on stdout (a JSON line), then one loop per stdin line,
    answering each with its wall and CPU seconds; stops at the end of stdin."""
    from albert_cli.cli import prefer_onednn

    prefer_onednn()  # as the scripts do, before TensorFlow is imported
    import tensorflow as tf

    from albert_tf import AlbertConfig
    from albert_tf.kernels import choose
    from albert_tf.pretraining.trainer import TrainerSettings

    config = AlbertConfig.from_json_file(args.config)
    kernels = choose(args.kernels)
    settings = TrainerSettings(train_batch_size=args.batch, num_train_steps=10_000, num_warmup_steps=100,
                               kernels=kernels)
    trainer = pretraining_trainer(config, settings)
    features = make_inputs(args.batch, args.seq, args.masked, config.vocab_size)
    features["next_sentence_labels"] = features.pop("sentence_order_label")  # the TFRecords' name
    iterator = trainer.batches(lambda context: tf.data.Dataset.from_tensors(features).repeat(), skip=0)

    def loop():
        started, started_cpu = time.perf_counter(), time.process_time()
        trainer.train_loop(iterator, args.steps_per_loop)
        trainer.step  # pylint: disable=pointless-statement  (reads the step back: the loop has finished)
        return {"wall": time.perf_counter() - started, "cpu": time.process_time() - started_cpu}

    first = loop()
    print(json.dumps({"device": device_name(), "kernels": kernels, "first_loop_seconds": first["wall"]}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(loop()), flush=True)


# --- The driver ---------------------------------------------------------------------------------

class BackendProcess:
    """A worker on `backend`; `loop()` has it run one loop and keeps the CPU seconds it reports."""

    def __init__(self, backend, args, directory):
        self.backend, self.cpu, self.error = backend, [], None
        command = [sys.executable, os.path.abspath(__file__), "--worker", "--config", args.config,
                   "--kernels", args.kernels]
        for flag in ("batch", "seq", "masked", "steps_per_loop"):
            command += [f"--{flag}", str(getattr(args, flag))]
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3"))
        self.stderr = open(os.path.join(directory, f"{backend}.stderr"), "w+")  # read back on a failure
        print(f"{backend}: starting", file=sys.stderr, flush=True)
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, text=True)

    def answer(self):
        line = self.process.stdout.readline()
        while line and not line.startswith("{"):  # a library's print, not an answer
            line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.stderr.seek(0)
            lines = [text for text in self.stderr.read().splitlines() if text.strip()]
            self.error = lines[-1] if lines else f"exit {self.process.returncode}"
            raise RuntimeError(f"{self.backend}: {self.error}")
        return json.loads(line)

    def loop(self):
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        self.cpu.append(self.answer()["cpu"])

    def close(self):
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait()
        self.stderr.close()


def measure(args, directory):
    """Every backend's report: device, kernels, first loop, per-round wall and CPU seconds (or error)."""
    processes = [BackendProcess(backend, args, directory) for backend in args.backends]
    reports = []
    try:
        for process in processes:  # each has traced and compiled: its first loop is done
            try:
                reports.append(dict(process.answer(), backend=process.backend))
            except RuntimeError:
                reports.append({"backend": process.backend, "error": process.error})
        running = [process for process, report in zip(processes, reports) if "error" not in report]
        print(f"timing {len(running)} backend(s), {args.rounds} round(s) of {args.steps_per_loop} step(s)",
              file=sys.stderr, flush=True)
        wall, _ = interleaved_medians({process.backend: process.loop for process in running}, args.rounds, warmup=0,
                                      on_round=lambda index, _: print(f"  round {index + 1}/{args.rounds}",
                                                                      file=sys.stderr, flush=True))
    finally:
        for process in processes:
            process.close()
    for report in reports:
        if "error" not in report:
            process = next(process for process in running if process.backend == report["backend"])
            report.update(wall_seconds=wall[report["backend"]], cpu_seconds=process.cpu,
                          steps_per_second=args.steps_per_loop / median(wall[report["backend"]]),
                          cpu_seconds_per_step=median(process.cpu) / args.steps_per_loop)
    return reports


def table(reports, batch):
    """Markdown rows: backend (device), kernels, first loop, steps/s, examples/s, CPU s/step, ratio."""
    baseline = next((report["steps_per_second"] for report in reports
                     if report["backend"] == "tensorflow" and "error" not in report), None)
    lines = ["| backend (device) | kernels | first loop s | steps/s | examples/s | CPU s/step | steps/s / TensorFlow's |",
             "|---|---|---|---|---|---|---|"]
    for report in reports:
        if "error" in report:
            continue
        ratio = f"{report['steps_per_second'] / baseline:.2f}" if baseline else "-"
        lines.append(f"| {report['device']} | {report['kernels']} | {report['first_loop_seconds']:.1f} "
                     f"| {report['steps_per_second']:.2f} | {report['steps_per_second'] * batch:.1f} "
                     f"| {report['cpu_seconds_per_step']:.2f} | {ratio} |")
    return "\n".join(lines + failure_lines(reports))


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    about = f"; {os.path.basename(args.config)}, global batch {args.batch} x {args.seq} tokens, {args.masked} masked"
    return run_side_by_side(lambda directory: measure(args, directory), lambda reports: table(reports, args.batch),
                            args.json, about)


if __name__ == "__main__":
    main()
