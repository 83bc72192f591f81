"""Where ours and keras-hub's albert-base spend a step on PyTorch: op by op, same shapes.

Keras runs eagerly on PyTorch, so every op of the model is one ATen call; `torch.profiler` times
each. Builds both systems as `bench/accelerator_step.py` does (same models, inputs, LAMB step),
times each case in interleaved rounds, wall and process CPU seconds, then profiles one more call
of each and prints its ops by self CPU time, with the number of calls and, with `--shapes`, their
input shapes, and how many Keras layer calls one call makes (each costs Python time beyond its
ops). `--threads 1` makes CPU seconds a fair comparison on a loaded machine: two threads sharing
busy cores wait for each other at every parallel op.

    KERAS_BACKEND=torch python bench/profile_torch_step.py --train_batch 2 --infer_batch 4 --seq 64 \\
        --masked 10 --steps 3 --threads 1
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import accelerator_step  # noqa: E402
from bench._common import cpu_model, interleaved_medians, load_average, median  # noqa: E402
from bench.albert_workload import make_inputs  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    accelerator_step.add_workload_flags(parser)
    accelerator_step.add_systems_flag(parser)
    parser.add_argument("--kinds", default=",".join(accelerator_step.KINDS), help="comma-separated, from train,infer")
    parser.add_argument("--threads", type=int, help="torch's intra-op threads (default: torch's own choice)")
    parser.add_argument("--top", type=int, default=25, help="ops per table")
    parser.add_argument("--shapes", action="store_true", help="one row per op and input shapes")
    args = accelerator_step.checked_flags(parser, parser.parse_args(argv))
    args.kinds = accelerator_step.comma_list(parser, "kinds", args.kinds, accelerator_step.KINDS)
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads: expected a positive number, got {args.threads}")
    import keras

    if keras.backend.backend() != "torch":
        parser.error(f"needs KERAS_BACKEND=torch (it profiles PyTorch's ops); Keras runs on {keras.backend.backend()!r}")
    return args


def op_table(run, top, shapes):
    """`torch.profiler`'s table of one call of `run`, and its matmul calls (mm, bmm, attention)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as profiler:
        run()
    averages = profiler.key_averages(group_by_input_shape=shapes)
    matmuls = sum(event.count for event in averages
                  if event.key in ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm")
                  or event.key.startswith("aten::_scaled_dot_product"))
    return averages.table(sort_by="self_cpu_time_total", row_limit=top), matmuls


def layer_calls(run):
    """How many times one call of `run` calls a Keras layer (`Layer.__call__`, models included)."""
    import keras

    original, calls = keras.layers.Layer.__call__, []

    def counted(layer, *args, **kwargs):
        calls.append(layer)
        return original(layer, *args, **kwargs)

    keras.layers.Layer.__call__ = counted
    try:
        run()
    finally:
        keras.layers.Layer.__call__ = original
    return len(calls)


def main(argv=None):
    args = parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = args.config_dict
    batches = (make_inputs(args.train_batch, args.seq, args.masked, cfg["vocab_size"]),
               make_inputs(args.infer_batch, args.seq, args.masked, cfg["vocab_size"], seed=1))
    print(f"device: {accelerator_step.device_name()}; {torch.get_num_threads()} thread(s); "
          f"cpu: {cpu_model()} x{os.cpu_count()}; load {load_average()}", flush=True)
    cases = {}
    for system in accelerator_step.available_systems(args.systems):
        models = (accelerator_step.ours_models(cfg, args.kernels) if system == "ours"
                  else accelerator_step.keras_hub_models(cfg))
        for kind, run in accelerator_step.cases_for(*models, *batches).items():
            if kind in args.kinds:
                cases[(system, kind)] = run
    wall, cpu = interleaved_medians(cases, args.steps)
    for (system, kind), run in cases.items():
        table, matmuls = op_table(run, args.top, args.shapes)
        print(f"\n{system} {kind}: {median(wall[(system, kind)]) * 1e3:.1f} ms/step wall, "
              f"{median(cpu[(system, kind)]) * 1e3:.1f} ms CPU (medians of {args.steps}); "
              f"{matmuls} matmul calls, {layer_calls(run)} Keras layer calls\n{table}", flush=True)
    print(f"load {load_average()} at the end", flush=True)


if __name__ == "__main__":
    main()
