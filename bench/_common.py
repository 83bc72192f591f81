"""Helpers shared by the benchmarks: interleaved rounds, medians, machine facts, the text of a data directory.

The reference machine is shared and noisy, so cases are timed in interleaved rounds (each round
runs every case once) rather than one after the other: a burst of load from elsewhere then hits
all cases alike instead of biasing whichever happened to run during it.
"""

import csv
import glob
import json
import os
import platform
import statistics
import tempfile
import time


def load_average():
    """The 1/5/15-minute load averages, rounded, to print beside every result."""
    return tuple(round(x, 2) for x in os.getloadavg())


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags():
    """The CPU's AVX-512 / AMX / bf16 capability, since bfloat16 speed on CPU hinges on it."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "unknown"
    wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "avx_vnni")
    return ",".join(flag for flag in wanted if flag in flags)


def interleaved_medians(cases, rounds, warmup=1, on_round=None):
    """Runs `warmup` untimed calls of every case, then `rounds` rounds timing each case once.

    Both wall time and process CPU time (all threads) are recorded: on a machine shared with
    other jobs, CPU seconds per step vary far less with the load than wall seconds do.

    Args:
        cases: dict name -> zero-argument callable that runs one step to completion.
    Returns:
        (wall, cpu): dicts name -> list of the per-round seconds.
    """
    for name, fn in cases.items():
        for _ in range(warmup):
            fn()
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for round_index in range(rounds):
        for name, fn in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
        if on_round is not None:
            on_round(round_index, wall)
    return wall, cpu


def run_side_by_side(measure, table, json_path=None, about=""):
    """A run of one process per backend: the CPU and the load (and `about`) printed, then
    `measure(directory)`'s reports (in a temporary directory), the load again, `table(reports)`;
    the reports written to `json_path` as JSON when given. Returns the reports."""
    print(f"cpu: {cpu_model()} x{os.cpu_count()}; load {load_average()} at the start{about}", flush=True)
    with tempfile.TemporaryDirectory() as directory:
        reports = measure(directory)
    print(f"load {load_average()} at the end", flush=True)
    print(table(reports), flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(reports, f, indent=1)
    return reports


def failure_lines(reports):
    """The lines under a table for the reports that carry an "error": the backend and that error."""
    return [f"\n{report['backend']}: failed: {report['error']}" for report in reports if "error" in report]


def median(values):
    return statistics.median(values)


def onednn_state():
    """Whether TensorFlow runs its oneDNN CPU kernels in this process ("on"/"off").

    It changes matmul speed by up to 1.6x on AVX2 CPUs, so every benchmark prints it.
    """
    from tensorflow.python.util import _pywrap_util_port  # no public API reports the state

    return "on" if _pywrap_util_port.IsMklEnabled() else "off"


GLUE_TEXT_COLUMNS = {  # task -> column names (or indices, for the header-less CoLA train/dev)
    "SST-2": ("sentence",),
    "CoLA": ("sentence", 3),
    "MRPC": ("#1 String", "#2 String"),
    "STS-B": ("sentence1", "sentence2"),
}


def text_lines(data_dir):
    """Every sentence field of `data_dir`/glue/*/{train,dev,test}.tsv and every non-empty line of
    `data_dir`/corpus/*.txt: bench_tokenizers.py's text (the full data sets) and the tokenizer
    tests' (the shipped samples)."""
    lines = []
    for task, columns in GLUE_TEXT_COLUMNS.items():
        for split in ("train", "dev", "test"):
            path = os.path.join(data_dir, "glue", task, f"{split}.tsv")
            with open(path, encoding="utf-8-sig", newline="") as handle:
                rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
            names = [name for name in columns if isinstance(name, str) and name in rows[0]]
            if names:
                indices, rows = [rows[0].index(name) for name in names], rows[1:]
            else:
                indices = [index for index in columns if isinstance(index, int)]
            if not indices:
                raise ValueError(f"{path}: no text column found; expected {columns}")
            lines.extend(row[index] for row in rows for index in indices)
    for path in sorted(glob.glob(os.path.join(data_dir, "corpus", "*.txt"))):
        with open(path, encoding="utf-8") as handle:
            lines.extend(line.rstrip("\n") for line in handle if line.strip())
    return lines
