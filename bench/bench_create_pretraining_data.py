"""Speed and peak memory of `albert_cli.create_pretraining_data` at 1x and 10x a corpus.

    python bench/bench_create_pretraining_data.py --corpus=CORPUS.txt   # e.g. 10 MB of Gutenberg paragraphs

Runs the CLI as a subprocess per (corpus scale, worker count) and reports instances, wall time,
instances/s, CPU seconds of the whole process tree, and peak RSS summed over the process and its
workers (sampled every 20 ms with psutil); with `--repeats`, the fastest and the median of the
runs (the fastest is the least disturbed by other load). The 10x corpus is 10 copies of the file, separated by
a blank line, in a temporary directory. The load average is printed with every row because the
reference machine is shared.
"""

import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import psutil
from absl import flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from albert_cli.cli import require, run_main  # pylint: disable=wrong-import-position

flags.DEFINE_string("corpus", os.path.join(REPO, "data/corpus/sample.txt"), "Input text: one paragraph per line, blank lines between documents.")
flags.DEFINE_string("spm_model_file", os.path.join(REPO, "data/albert_spm/30k-clean.model"), "Model.")
flags.DEFINE_list("scales", ["1", "10"], "Corpus copies per run.")
flags.DEFINE_list("workers", ["1", "2"], "--num_workers values.")
flags.DEFINE_integer("num_output_shards", 4, "Output shards (the same for every worker count).")
flags.DEFINE_integer("max_seq_length", 512, "As the original's reference run.")
flags.DEFINE_integer("dupe_factor", 2, "As the original's reference run.")
flags.DEFINE_integer("repeats", 1, "Runs per row: the table shows the fastest and the median wall time.")
FLAGS = flags.FLAGS

def make_corpus(directory, scale):
    path = os.path.join(directory, f"corpus_x{scale}.txt")
    with open(FLAGS.corpus, "rb") as source:
        text = source.read()
    with open(path, "wb") as target:
        for copy in range(scale):
            target.write(text if copy == 0 else b"\n" + text)
    return path


def tree_rss(process):
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run_once(corpus_path, workers, output_prefix, env):
    command = [sys.executable, "-m", "albert_cli.create_pretraining_data", f"--input_file={corpus_path}",
               f"--output_file={output_prefix}", f"--spm_model_file={FLAGS.spm_model_file}",
               f"--max_seq_length={FLAGS.max_seq_length}", f"--dupe_factor={FLAGS.dupe_factor}",
               f"--num_output_shards={FLAGS.num_output_shards}", f"--num_workers={workers}"]
    load_before = os.getloadavg()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    child = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    process = psutil.Process(child.pid)
    peak = 0
    while child.poll() is None:
        try:
            peak = max(peak, tree_rss(process))
        except psutil.NoSuchProcess:
            break
        time.sleep(0.02)
    wall = time.monotonic() - start
    stderr = child.stderr.read().decode("utf-8", "replace")
    require(child.returncode == 0, f"builder failed: {stderr.strip().splitlines()[-1:]}")
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(output_prefix + ".stats.json") as handle:
        stats = json.load(handle)
    digest = hashlib.sha256()
    for path in stats["output_files"]:
        with open(path, "rb") as handle:
            digest.update(handle.read())
    shutil.rmtree(os.path.dirname(output_prefix))
    return {
        "instances": stats["instances"], "wall_s": wall, "instances_per_s": stats["instances"] / wall,
        "cpu_s": (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime),
        "peak_rss_mb": peak / 2**20, "load_before": load_before, "load_after": os.getloadavg(),
        "sha256": digest.hexdigest()[:12],
    }


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {argv[1:]}")
    require(os.path.exists(FLAGS.corpus), f"--corpus {FLAGS.corpus!r} does not exist")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    with tempfile.TemporaryDirectory() as directory:
        print("| corpus | workers | instances | wall s (best / median) | instances/s (best) | CPU s "
              "| peak RSS MB (all processes) | output sha256 | load avg (1 min) during runs |")
        print("|---|---|---|---|---|---|---|---|---|")
        for scale in map(int, FLAGS.scales):
            corpus_path = make_corpus(directory, scale)
            for workers in map(int, FLAGS.workers):
                runs = [run_once(corpus_path, workers, os.path.join(directory, f"out_x{scale}_w{workers}_{i}", "data"),
                                 env) for i in range(FLAGS.repeats)]
                walls = sorted(run["wall_s"] for run in runs)
                loads = [f"{run['load_before'][0]:.1f}" for run in runs] + [f"{runs[-1]['load_after'][0]:.1f}"]
                require(len({run["sha256"] for run in runs}) == 1, "runs wrote different bytes")
                print(f"| {scale}x ({os.path.getsize(corpus_path) / 1e6:.1f} MB) | {workers} | "
                      f"{runs[0]['instances']} | {walls[0]:.1f} / {statistics.median(walls):.1f} | "
                      f"{runs[0]['instances'] / walls[0]:.0f} | "
                      f"{statistics.median(run['cpu_s'] for run in runs):.1f} | "
                      f"{max(run['peak_rss_mb'] for run in runs):.0f} | {runs[0]['sha256']} | "
                      f"{' -> '.join(loads)} |", flush=True)
            os.remove(corpus_path)


if __name__ == "__main__":
    run_main(main)
