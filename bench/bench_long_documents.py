"""Long documents: time per token and peak memory of dense vs block-sparse attention, and of recomputation.

The same number of tokens per step at every length (`--tokens_per_step`, 4,096: 8 x 512 = 1 x 4,096),
for a training step (MLM + SOP through `AlbertPretrainingModel` and the pretraining loss, LAMB
update) and for inference (the encoder's forward pass), with

- dense attention at each length,
- block-sparse attention at each length (at or below (5 + 2r) x block_size tokens the layer runs
  dense; the table says so),
- block-sparse attention with `recompute=True` (training only),

under each kernel set of `--kernels`. Each case runs in its own process, so its peak RSS
(`ru_maxrss` of that process) is its own; the part above TensorFlow's runtime (the peak
once TensorFlow is imported) is listed beside it. A dense case whose attention alone is estimated past
`--oom_limit_gb` (default: the machine's available memory) is not run and is listed as `not run:
estimated N GB`; a case whose process dies (the kernel's OOM killer, an allocation failure) is
listed as `out of memory`. The output ends with the issue's target ratios; `--json` writes everything.

    python bench/bench_long_documents.py --json=long_documents.json
    python bench/bench_long_documents.py --config=configs/albert_tiny_long.json --lengths=128,256 \\
        --tokens_per_step=256 --kernels=reference
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)
from albert_cli.cli import prefer_onednn  # noqa: E402

prefer_onednn()  # before TensorFlow loads, as the scripts do

from bench._common import cpu_model, load_average  # noqa: E402

ATTENTIONS = ("dense", "block_sparse", "block_sparse_recompute")
MODES = ("train", "infer")
OUT_OF_MEMORY_MARKS = ("ResourceExhaustedError", "MemoryError", "std::bad_alloc", "OOM when allocating")
_FLOAT_BYTES = 4


def case_config(config_file, attention, max_length):
    """The config of `config_file` with `attention` and positions for `max_length` tokens."""
    from albert_tf import AlbertConfig

    config = AlbertConfig.from_json_file(config_file)
    config = config.replace(max_position_embeddings=max(config.max_position_embeddings, max_length))
    if attention == "dense":
        return config.replace(attention_type="dense", block_size=None, num_random_blocks=None)
    if config.attention_type != "block_sparse":
        raise ValueError(f"--config {config_file} is not block-sparse: give a config with attention_type "
                         "\"block_sparse\", block_size and num_random_blocks (configs/albert_base_4096.json)")
    return config


def dense_attention_gb(config, mode, batch, seq):
    """Rough memory of dense attention's [batch, heads, seq, seq] float32 tensors: the scores and
    the probabilities of one layer at a time for inference, of every layer for training (kept for
    the backward pass)."""
    layers = config.num_hidden_layers if mode == "train" else 1
    return 2 * layers * batch * config.num_attention_heads * seq * seq * _FLOAT_BYTES / 2**30


def available_memory_gb():
    """The machine's available memory (MemAvailable: what a new process can take without swapping)."""
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    raise OSError("no MemAvailable in /proc/meminfo")


def step_function(case):
    """A callable running one step of `case` to completion."""
    import tensorflow as tf

    from albert_tf import AlbertModel, AlbertPretrainingModel
    from albert_tf.training import optimization, replica_update
    from albert_tf.pretraining.losses import pretraining_losses
    from bench.bench_pretraining import random_features

    config = case_config(case["config"], case["attention"], case["seq"])
    recompute = case["attention"] == "block_sparse_recompute"
    backbone = AlbertModel(config, kernels=case["kernels"], recompute=recompute, name="albert")
    features = {name: tf.constant(value) for name, value in
                random_features(case["batch"], case["seq"], config.vocab_size).items()}
    if case["mode"] == "infer":
        inputs = {name: features[name] for name in ("input_word_ids", "input_mask", "input_type_ids")}
        infer = tf.function(lambda: backbone(inputs, training=False)["sequence_output"])
        return lambda: infer().numpy()

    model = AlbertPretrainingModel(backbone=backbone)
    names = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")
    model({name: features[name] for name in names})
    optimizer = optimization.create_optimizer("lamb", 1e-4, 1000, 10)
    optimizer.build(model.trainable_variables)

    @tf.function
    def train():
        with tf.GradientTape() as tape:
            outputs = model({name: features[name] for name in names}, training=True)
            losses = pretraining_losses(outputs, features, tf.reduce_sum(features["masked_lm_weights"]), case["batch"])
        gradients = tape.gradient(losses.loss, model.trainable_variables)
        replica_update.apply_gradients_across_replicas(optimizer, gradients, model.trainable_variables)
        return losses.loss

    return lambda: train().numpy()


def worker(case):
    """Times `case` in this process and prints its record as one JSON line."""
    import tensorflow  # noqa: F401  (its runtime is the baseline below, not the case's)

    from albert_tf.config import min_sparse_length

    baseline_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    step = step_function(case)
    for _ in range(case["warmup"]):
        step()
    wall, cpu = [], []
    for _ in range(case["steps"]):
        started, started_cpu = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    config = case_config(case["config"], case["attention"], case["seq"])
    sparse = config.attention_type == "block_sparse" and case["seq"] > min_sparse_length(
        config.block_size, config.num_random_blocks)
    tokens = case["batch"] * case["seq"]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({**case, "status": "ok", "attention_path": "block_sparse" if sparse else "dense",
                      "seconds_per_step": statistics.median(wall), "cpu_seconds_per_step": statistics.median(cpu),
                      "microseconds_per_token": 1e6 * statistics.median(wall) / tokens,
                      "cpu_microseconds_per_token": 1e6 * statistics.median(cpu) / tokens,
                      "peak_rss_mib": peak_mib, "peak_above_runtime_mib": peak_mib - baseline_mib,
                      "loadavg": load_average()}))


def run_case(case, limit_gb):
    """The record of `case`: measured in a child process, or why it was not."""
    if case["attention"] == "dense":
        estimate = dense_attention_gb(case_config(case["config"], "dense", case["seq"]), case["mode"],
                                      case["batch"], case["seq"])
        if estimate > limit_gb:
            return {**case, "status": f"not run: estimated {estimate:.1f} GB", "estimated_gb": estimate}
    command = [sys.executable, os.path.abspath(__file__), f"--worker={json.dumps(case)}"]
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    if result.returncode == 0:
        return json.loads(result.stdout.strip().splitlines()[-1])
    if result.returncode < 0 or any(mark in result.stderr for mark in OUT_OF_MEMORY_MARKS):
        return {**case, "status": "out of memory", "returncode": result.returncode}
    raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")


def cases(args):
    lengths = [int(length) for length in args.lengths.split(",")]
    for kernels in args.kernels.split(","):
        for mode in args.modes.split(","):
            for attention in args.attention.split(","):
                if mode == "infer" and attention == "block_sparse_recompute":
                    continue
                for seq in lengths:
                    yield {"mode": mode, "attention": attention, "kernels": kernels, "seq": seq,
                           "batch": args.tokens_per_step // seq, "config": args.config, "steps": args.steps,
                           "warmup": args.warmup}


def ratio(records, numerator, denominator, field):
    """`field` of the record matching `numerator` over that of `denominator`; None if either did not run."""
    def value(match):
        found = [r for r in records if all(r[k] == v for k, v in match.items()) and r["status"] == "ok"]
        return found[0].get(field) if found else None

    top, bottom = value(numerator), value(denominator)
    return None if top is None or bottom is None else top / bottom


def target_ratios(records, lengths, kernel_sets):
    """The issue's targets: block-sparse 1 x longest vs dense at the shortest (time per token and
    peak RSS, both modes; at most 1.5), recompute vs not at the longest (peak RSS at most 0.5, time
    at most 1.4), and each kernel set's time over the reference's. Time is wall time and CPU time:
    on a machine shared with other work only the CPU time's ratio means anything."""
    short, long = min(lengths), max(lengths)
    rows = []
    for kernels in kernel_sets:
        for mode in MODES:
            for field, target in (("microseconds_per_token", 1.5), ("cpu_microseconds_per_token", 1.5),
                                  ("peak_rss_mib", 1.5)):
                rows.append({"ratio": f"{mode}: block-sparse {long} / dense {short}, {field}", "kernels": kernels,
                             "at_most": target, "value": ratio(
                                 records, dict(mode=mode, attention="block_sparse", seq=long, kernels=kernels),
                                 dict(mode=mode, attention="dense", seq=short, kernels=kernels), field)})
        # Peak RSS counts TensorFlow's runtime too; peak_above_runtime_mib is what the model and step add.
        for field, target in (("peak_rss_mib", 0.5), ("peak_above_runtime_mib", 0.5), ("microseconds_per_token", 1.4),
                              ("cpu_microseconds_per_token", 1.4)):
            rows.append({"ratio": f"train at {long}: recompute / not, {field}", "kernels": kernels,
                         "at_most": target, "value": ratio(
                             records, dict(mode="train", attention="block_sparse_recompute", seq=long, kernels=kernels),
                             dict(mode="train", attention="block_sparse", seq=long, kernels=kernels), field)})
        if kernels != "reference":
            for mode in MODES:
                for attention in ("dense", "block_sparse"):
                    for field in ("microseconds_per_token", "cpu_microseconds_per_token"):
                        rows.append({"ratio": f"{mode} {attention} at {long}: {kernels} / reference, {field}",
                                     "kernels": kernels, "at_most": 1.0, "value": ratio(
                                         records, dict(mode=mode, attention=attention, seq=long, kernels=kernels),
                                         dict(mode=mode, attention=attention, seq=long, kernels="reference"), field)})
    return rows


def table(records, targets):
    lines = ["| mode | attention | kernels | batch x seq | path | us/token | CPU s/step | peak RSS (MiB) "
             "| above the runtime (MiB) | loadavg |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        shape = f"{r['batch']} x {r['seq']}"
        if r["status"] != "ok":
            lines.append(f"| {r['mode']} | {r['attention']} | {r['kernels']} | {shape} | {r['status']} | | | | | |")
            continue
        lines.append(f"| {r['mode']} | {r['attention']} | {r['kernels']} | {shape} | {r['attention_path']} | "
                     f"{r['microseconds_per_token']:.1f} | {r['cpu_seconds_per_step']:.2f} | {r['peak_rss_mib']:.0f} | "
                     f"{r['peak_above_runtime_mib']:.0f} | "
                     f"{' '.join(f'{x:.1f}' for x in r['loadavg'])} |")
    lines += ["", "| target | kernels | value | met |", "|---|---|---|---|"]
    for t in targets:
        value = "not measured" if t["value"] is None else f"{t['value']:.2f}"
        met = "" if t["value"] is None else "yes" if t["value"] <= t["at_most"] else "no"
        lines.append(f"| {t['ratio']} (at most {t['at_most']}) | {t['kernels']} | {value} | {met} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=os.path.join(REPO_ROOT, "configs", "albert_base_4096.json"),
                        help="a block-sparse albert_config.json; the dense cases use it with attention_type dense")
    parser.add_argument("--lengths", default="512,1024,2048,4096")
    parser.add_argument("--tokens_per_step", type=int, default=4096, help="batch = this / length at every length")
    parser.add_argument("--kernels", default="reference,cpu", help="comma list of kernel sets (reference, cpu)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma list of train, infer")
    parser.add_argument("--attention", default=",".join(ATTENTIONS), help=f"comma list of {', '.join(ATTENTIONS)}")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per case (the median is kept)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--oom_limit_gb", type=float, default=None,
                        help="skip a dense case whose attention is estimated past this many GB "
                        "(default: the machine's available memory)")
    parser.add_argument("--json", default=None, help="also write the records and ratios here")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    lengths = [int(length) for length in args.lengths.split(",")]
    for flag, given, allowed in (("--modes", args.modes, MODES), ("--attention", args.attention, ATTENTIONS),
                                 ("--kernels", args.kernels, ("reference", "cpu"))):
        if not set(given.split(",")) <= set(allowed):
            parser.error(f"{flag} takes a comma list of {', '.join(allowed)}, got {given}")
    if any(args.tokens_per_step % length for length in lengths):
        parser.error(f"--tokens_per_step {args.tokens_per_step} must be a multiple of every --lengths value")
    try:
        case_config(args.config, "block_sparse", max(lengths))
    except (OSError, ValueError) as error:
        parser.error(str(error))
    limit_gb = available_memory_gb() if args.oom_limit_gb is None else args.oom_limit_gb
    print(f"processor: {cpu_model()}; load average: {load_average()}; memory limit: {limit_gb:.3g} GB", flush=True)
    records = []
    for case in cases(args):
        records.append(run_case(case, limit_gb))
        print(json.dumps(records[-1]), file=sys.stderr, flush=True)
    targets = target_ratios(records, lengths, args.kernels.split(","))
    print(table(records, targets))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"processor": cpu_model(), "load_average_after": load_average(), "memory_limit_gb": limit_gb,
                       "records": records, "targets": targets}, handle, indent=1)


if __name__ == "__main__":
    main()
