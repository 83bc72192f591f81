"""Side-by-side speed of albert-base: our model vs keras-hub's AlbertBackbone vs HF PyTorch ALBERT.

Measures, in one process and in interleaved rounds, a pretraining step (batch 8, seq 128, 20
masked positions, MLM + SOP loss, optimizer update) and an inference batch (batch 32, seq 128), in
float32 and mixed_bfloat16, with and without XLA. It also measures the machine's own dense
matmul throughput, so each result can be read as a fraction of what this CPU can do at all;
times ALBERT's matmuls alone at the model's shapes (`matmul_floor`: no implementation that
computes every position can beat it with these kernels, so best keras-hub / floor bounds the
speedup over keras-hub such an implementation can show); and counts the float casts in each TF
case's traced graph (the passes mixed precision adds; for XLA cases, the graph XLA is handed,
before it fuses them).

    python bench/bench_model.py                       # everything (~15 min on 2 cores)
    python bench/bench_model.py --only ours,keras_hub --dtypes float32 --xla off --steps 5

Every system gets the same inputs, loss and zero dropout; both TF models get the project's LAMB
(`albert_tf.training.optimization.Lamb`), PyTorch gets torch.optim.AdamW (it has no LAMB). Wall and process
CPU seconds are both reported: on a shared machine CPU seconds are the steadier measure.
"""

import argparse
import functools
import json
import os
import sys

# oneDNN and log settings must be in place before TensorFlow is imported.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from albert_cli.cli import prefer_onednn  # noqa: E402

prefer_onednn()  # TensorFlow's oneDNN CPU kernels, as the scripts ask for them, for every system alike

import numpy as np  # noqa: E402

from bench._common import cpu_flags, cpu_model, interleaved_medians, load_average, median, onednn_state  # noqa: E402
from bench.albert_workload import BASE_CONFIG, LEARNING_RATE, WEIGHT_DECAY, make_inputs, model_flops  # noqa: E402

SYSTEMS = ("ours", "ours_reference", "keras_hub", "hf_torch", "matmul_floor")
DTYPES = ("float32", "mixed_bfloat16")
KINDS = ("train", "infer")


# --------------------------------------------------------------------------- TensorFlow cases

def pretraining_loss(tf, mlm_logits, sop_logits, batch):
    """Weighted masked-LM cross-entropy plus the mean SOP cross-entropy, in float32."""
    mlm = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["masked_lm_ids"], logits=tf.cast(mlm_logits, tf.float32))
    weights = batch["masked_lm_weights"]
    mlm = tf.reduce_sum(mlm * weights) / (tf.reduce_sum(weights) + 1e-5)
    sop = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["sentence_order_label"], logits=tf.cast(sop_logits, tf.float32))
    return mlm + tf.reduce_mean(sop)


def tf_train_step(tf, keras, forward, variables, xla):
    """A compiled step: forward, loss, gradients, the project's LAMB update (the same for both
    TF systems; it excludes LayerNorm and bias from decay by path, which both name alike)."""
    from albert_tf.training.optimization import Lamb

    optimizer = Lamb(learning_rate=LEARNING_RATE, weight_decay_rate=WEIGHT_DECAY)
    optimizer.build(variables)

    @tf.function(jit_compile=xla)
    def step(batch):
        with tf.GradientTape() as tape:
            mlm_logits, sop_logits = forward(batch)
            loss = pretraining_loss(tf, mlm_logits, sop_logits, batch)
        # Densified, as the project's training loop does (its LAMB takes dense gradients).
        grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, variables)]
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    return step


def timed(tf, function, batch):
    """`function(batch)` with its outputs fetched, to time; `.casts()` counts its traced casts."""

    args = () if batch is None else (batch,)

    def run():
        return tf.nest.map_structure(lambda t: t.numpy(), function(*args))

    run.casts = lambda: float_casts(function.get_concrete_function(*args).graph)
    return run


def float_casts(graph):
    """(number of float-to-float Cast ops, elements they copy) in one traced call: the precision
    casts mixed precision adds, each a full pass over its tensor. Only casts that run count: those
    that the outputs or the side effects (variable updates) depend on; TF prunes the others."""
    casts = [op for op in live_ops(graph) if op.type == "Cast"
             and op.inputs[0].dtype.is_floating and op.outputs[0].dtype.is_floating]
    return len(casts), sum(op.outputs[0].shape.num_elements() or 0 for op in casts)


def live_ops(graph):
    """The ops of a traced function that its outputs and control outputs depend on."""
    live, pending = set(), [t.op for t in graph.outputs] + list(graph.control_outputs)
    while pending:
        op = pending.pop()
        if op not in live:
            live.add(op)
            pending.extend([t.op for t in op.inputs] + list(op.control_inputs))
    return live


def ours_cases(tf, keras, cfg, dtype, xla, train_batch, infer_batch, cpu_kernels=True):
    """Our model: with the CPU kernel sets ("cpu" to train, "cpu_inference" to infer), or with
    `cpu_kernels=False` the reference kernels, to show what they change side by side (with XLA
    on, the whole step is one XLA program either way)."""
    from albert_tf.config import AlbertConfig
    from albert_tf.models import AlbertModel, AlbertPretrainingModel

    def traced(function, batch):
        function.get_concrete_function(batch)  # later calls reuse this trace
        return timed(tf, function, batch)

    config = AlbertConfig.from_dict(cfg)
    policy = None if dtype == "float32" else dtype
    cases = {}
    if train_batch is not None:
        model = AlbertPretrainingModel(config, dtype=policy, kernels="cpu" if cpu_kernels else "reference")
        feed = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")

        def forward(batch):
            outputs = model({k: batch[k] for k in feed}, training=True)
            return outputs["mlm_logits"], outputs["sop_logits"]

        step = tf_train_step(tf, keras, forward, model.trainable_variables, xla)
        batch = {k: tf.constant(v) for k, v in train_batch.items()}
        cases["train"] = traced(step, batch)
    if infer_batch is not None:
        backbone = AlbertModel(config, dtype=policy, kernels="cpu_inference" if cpu_kernels else "reference")

        @tf.function(jit_compile=xla)
        def infer(batch):
            outputs = backbone(batch, training=False)
            return outputs["sequence_output"], outputs["pooled_output"]

        ibatch = {k: tf.constant(infer_batch[k]) for k in ("input_word_ids", "input_mask", "input_type_ids")}
        cases["infer"] = traced(infer, ibatch)
    return cases


def keras_hub_cases(tf, keras, cfg, dtype, xla, train_batch, infer_batch):
    """keras-hub's AlbertBackbone, plus its MaskedLMHead (tied) and a Dense(2) SOP head."""
    import keras_hub

    policy = None if dtype == "float32" else dtype

    def backbone_fn():
        return keras_hub.models.AlbertBackbone(
            vocabulary_size=cfg["vocab_size"], num_layers=cfg["num_hidden_layers"],
            num_heads=cfg["num_attention_heads"], embedding_dim=cfg["embedding_size"],
            hidden_dim=cfg["hidden_size"], intermediate_dim=cfg["intermediate_size"],
            num_groups=cfg["num_hidden_groups"], dropout=0.0, dtype=policy)

    def hub_inputs(batch):
        return {"token_ids": batch["input_word_ids"], "segment_ids": batch["input_type_ids"],
                "padding_mask": batch["input_mask"]}

    cases = {}
    if train_batch is not None:
        backbone = backbone_fn()
        mlm_head = keras_hub.layers.MaskedLMHead(
            vocabulary_size=cfg["vocab_size"], token_embedding=backbone.token_embedding,
            intermediate_activation=lambda x: keras.activations.gelu(x, approximate=True),
            layer_norm_epsilon=1e-12, dtype=policy)
        sop_head = keras.layers.Dense(2, dtype=policy)

        def forward(batch):
            outputs = backbone(hub_inputs(batch), training=True)
            mlm_logits = mlm_head(outputs["sequence_output"], mask_positions=batch["masked_lm_positions"])
            return mlm_logits, sop_head(outputs["pooled_output"])

        batch = {k: tf.constant(v) for k, v in train_batch.items()}
        forward(batch)  # builds the heads so their variables exist before the optimizer does
        variables = backbone.trainable_variables + mlm_head.trainable_variables + sop_head.trainable_variables
        step = tf_train_step(tf, keras, forward, variables, xla)
        cases["train"] = timed(tf, step, batch)
    if infer_batch is not None:
        infer_backbone = backbone_fn()

        @tf.function(jit_compile=xla)
        def infer(batch):
            outputs = infer_backbone(hub_inputs(batch), training=False)
            return outputs["sequence_output"], outputs["pooled_output"]

        ibatch = {k: tf.constant(infer_batch[k]) for k in ("input_word_ids", "input_mask", "input_type_ids")}
        cases["infer"] = timed(tf, infer, ibatch)
    return cases


# --------------------------------------------------------------------------- matmul floor

def matmul_floor_cases(tf, cfg, dtype, train_batch, infer_batch):
    """ALBERT's matmuls alone at the model's shapes, in float32 or (for `mixed_bfloat16`) all in
    bfloat16: the time below which no implementation using these kernels can go (it still has
    to do every one of them).

    The chain is the full model's (what `model_flops` counts: embedding projection, per layer
    Q/K/V/output, both FFN matmuls and the two attention products, the pooler, and for training
    the MLM head at the masked positions, the SOP head and the backward pass through all of
    it), with ALBERT's dependency structure (Q, K and V all read the layer input) and one
    shared set of weights, so the backward pass sums per-layer weight gradients as ALBERT's does.
    No softmax, LayerNorm, activation, bias, loss or optimizer. keras-hub's time divided by this
    is the largest speedup over keras-hub that a full-model implementation can show here.
    """
    h, e, i, v, heads, layers = (cfg["hidden_size"], cfg["embedding_size"], cfg["intermediate_size"],
                                 cfg["vocab_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"])
    rng = np.random.default_rng(2)
    matmul_dtype = tf.float32 if dtype == "float32" else tf.bfloat16

    def weight(rows, cols):
        return tf.Variable(tf.cast(rng.normal(0.0, rows ** -0.5, (rows, cols)), matmul_dtype))

    shared = {"projection": weight(e, h), "query": weight(h, h), "key": weight(h, h), "value": weight(h, h),
              "output": weight(h, h), "ffn_in": weight(h, i), "ffn_out": weight(i, h), "pooler": weight(h, h),
              "mlm": weight(h, e), "decoder": weight(e, v), "sop": weight(h, 2)}

    def encoder(embedded, batch, seq):
        hidden = tf.matmul(embedded, shared["projection"])
        for _ in range(layers):
            def per_head(x):
                return tf.reshape(x, [batch * heads, seq, h // heads])
            query, key, value = (per_head(tf.matmul(hidden, shared[name])) for name in ("query", "key", "value"))
            scores = tf.matmul(query, key, transpose_b=True) * (1.0 / seq)
            context = tf.reshape(tf.matmul(scores, value), [batch * seq, h])
            hidden = tf.matmul(tf.matmul(tf.matmul(context, shared["output"]), shared["ffn_in"]), shared["ffn_out"])
        pooled = tf.matmul(hidden[:batch], shared["pooler"])
        return hidden, pooled

    def train_case(batch, seq, masked):
        embedded = tf.cast(rng.normal(size=(batch * seq, e)), matmul_dtype)
        variables = list(shared.values())

        @tf.function
        def train():
            with tf.GradientTape() as tape:
                hidden, pooled = encoder(embedded, batch, seq)
                logits = tf.matmul(tf.matmul(hidden[: batch * masked], shared["mlm"]), shared["decoder"])
                loss = tf.reduce_sum(logits) + tf.reduce_sum(tf.matmul(pooled, shared["sop"]))
            return tape.gradient(loss, variables)

        return timed(tf, train, None)

    def infer_case(batch, seq):
        embedded = tf.cast(rng.normal(size=(batch * seq, e)), matmul_dtype)
        return timed(tf, tf.function(lambda: encoder(embedded, batch, seq)), None)

    # One function per case: closures bind names late, so the two must not share a scope.
    cases = {}
    if train_batch is not None:
        cases["train"] = train_case(*train_batch["input_word_ids"].shape, train_batch["masked_lm_positions"].shape[1])
    if infer_batch is not None:
        cases["infer"] = infer_case(*infer_batch["input_word_ids"].shape)
    return cases


# --------------------------------------------------------------------------- PyTorch case

def hf_torch_cases(cfg, train_batch, infer_batch, threads):
    """HuggingFace's PyTorch AlbertForPreTraining / AlbertModel, float32 (its MLM scores all T)."""
    import torch
    import transformers

    torch.set_num_threads(threads)
    config = transformers.AlbertConfig(
        vocab_size=cfg["vocab_size"], embedding_size=cfg["embedding_size"],
        hidden_size=cfg["hidden_size"], num_hidden_layers=cfg["num_hidden_layers"],
        num_attention_heads=cfg["num_attention_heads"], intermediate_size=cfg["intermediate_size"],
        hidden_act="gelu_new", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0)
    cases = {}
    if train_batch is not None:
        model = transformers.AlbertForPreTraining(config).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
        labels = np.full(train_batch["input_word_ids"].shape, -100, np.int64)
        np.put_along_axis(labels, train_batch["masked_lm_positions"], train_batch["masked_lm_ids"], 1)
        kwargs = {
            "input_ids": torch.from_numpy(train_batch["input_word_ids"]).long(),
            "attention_mask": torch.from_numpy(train_batch["input_mask"]).long(),
            "token_type_ids": torch.from_numpy(train_batch["input_type_ids"]).long(),
            "labels": torch.from_numpy(labels),
            "sentence_order_label": torch.from_numpy(train_batch["sentence_order_label"]).long(),
        }

        def train():
            optimizer.zero_grad(set_to_none=True)
            loss = model(**kwargs).loss
            loss.backward()
            optimizer.step()
            return loss.item()

        cases["train"] = train
    if infer_batch is not None:
        backbone = transformers.AlbertModel(config).eval()
        ikwargs = {
            "input_ids": torch.from_numpy(infer_batch["input_word_ids"]).long(),
            "attention_mask": torch.from_numpy(infer_batch["input_mask"]).long(),
            "token_type_ids": torch.from_numpy(infer_batch["input_type_ids"]).long(),
        }

        def infer():
            with torch.inference_mode():
                return backbone(**ikwargs).last_hidden_state.shape

        cases["infer"] = infer
    return cases


# --------------------------------------------------------------------------- machine peak

def matmul_throughput(tf, dtype, n=2048, chain=8, reps=5):
    """FLOP/s of a chain of n x n tf.matmul calls: what this CPU's TF kernels reach at best."""
    import time

    a = tf.random.normal((n, n), dtype=tf.float32) * (1.0 / n)
    a = tf.cast(a, dtype)

    @tf.function
    def run(x):
        for _ in range(chain):
            x = tf.matmul(x, a)
        return x

    run(a).numpy()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run(a).numpy()
        times.append(time.perf_counter() - start)
    return 2.0 * n ** 3 * chain / median(times)


# --------------------------------------------------------------------------- main

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(SYSTEMS), help="systems, comma-separated")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="TF dtype policies to run")
    parser.add_argument("--xla", default="off,on", help="off, on or off,on (TF systems)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="train, infer or both")
    parser.add_argument("--steps", type=int, default=5, help="timed interleaved rounds")
    parser.add_argument("--warmup", type=int, default=1, help="untimed calls after the compile")
    parser.add_argument("--train-batch", type=int, default=8)
    parser.add_argument("--infer-batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--masked", type=int, default=20)
    parser.add_argument("--layers", type=int, help="override num_hidden_layers (quick A/B runs only)")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--json", help="also write the raw results here")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    systems = [s for s in args.only.split(",") if s]
    dtypes = [d for d in args.dtypes.split(",") if d]
    xla_modes = [m == "on" for m in args.xla.split(",") if m]
    kinds = [k for k in args.kinds.split(",") if k]
    for name, allowed, given in (("--only", SYSTEMS, systems), ("--dtypes", DTYPES, dtypes),
                                 ("--kinds", KINDS, kinds)):
        if not set(given) <= set(allowed):
            raise SystemExit(f"{name}: pick from {allowed}")

    import keras
    import tensorflow as tf

    with open(BASE_CONFIG) as f:
        cfg = json.load(f)
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    train_batch = make_inputs(args.train_batch, args.seq, args.masked, cfg["vocab_size"])
    infer_batch = make_inputs(args.infer_batch, args.seq, args.masked, cfg["vocab_size"], seed=1)
    use_train = train_batch if "train" in kinds else None
    use_infer = infer_batch if "infer" in kinds else None

    print(f"cpu: {cpu_model()} x{os.cpu_count()} [{cpu_flags()}]; tf {tf.__version__}, "
          f"keras {keras.__version__}; oneDNN={onednn_state()}; "
          f"load {load_average()}", flush=True)
    peaks = {"float32": matmul_throughput(tf, tf.float32), "mixed_bfloat16": matmul_throughput(tf, tf.bfloat16)}
    print("matmul 2048^2 GFLOP/s: " + ", ".join(f"{k} {v / 1e9:.1f}" for k, v in peaks.items()), flush=True)

    cases, meta = {}, {}
    for system in systems:
        if system == "hf_torch":
            for kind, fn in hf_torch_cases(cfg, use_train, use_infer, args.threads).items():
                name = f"{system}/float32/{kind}"
                cases[name], meta[name] = fn, (system, "float32", False, kind)
            continue
        if system == "matmul_floor":
            for dtype in dtypes:
                for kind, fn in matmul_floor_cases(tf, cfg, dtype, use_train, use_infer).items():
                    name = f"{system}/{dtype}/{kind}"
                    cases[name], meta[name] = fn, (system, dtype, False, kind)
            continue
        builder = {"ours": ours_cases, "keras_hub": keras_hub_cases,
                   "ours_reference": functools.partial(ours_cases, cpu_kernels=False)}[system]
        for dtype in dtypes:
            for xla in xla_modes:
                if system == "ours_reference" and xla:
                    continue  # under XLA there is nothing to unfuse: the step is one XLA program
                built = builder(tf, keras, cfg, dtype, xla, use_train, use_infer)
                for kind, fn in built.items():
                    name = f"{system}/{dtype}{'+xla' if xla else ''}/{kind}"
                    cases[name], meta[name] = fn, (system, dtype, xla, kind)
    print(f"{len(cases)} cases; warming up (compiles)...", flush=True)

    def progress(round_index, times):
        print(f"round {round_index + 1}/{args.steps} done, load {load_average()}", flush=True)

    load_before = load_average()
    times, cpu = interleaved_medians(cases, args.steps, warmup=1 + args.warmup, on_round=progress)
    load_after = load_average()

    flops = {kind: model_flops(cfg, args.train_batch if kind == "train" else args.infer_batch,
                               args.seq, args.masked, kind) for kind in KINDS}
    def best_hub(kind, series):
        return min((median(series[n]) for n in cases
                    if meta[n][0] == "keras_hub" and meta[n][3] == kind), default=None)

    rows = []
    for name in cases:
        system, dtype, xla, kind = meta[name]
        sec, cpu_sec = median(times[name]), median(cpu[name])
        hub_wall, hub_cpu = best_hub(kind, times), best_hub(kind, cpu)
        rows.append({
            "case": name, "kind": kind, "median_s": sec, "min_s": min(times[name]),
            "max_s": max(times[name]), "median_cpu_s": cpu_sec,
            "gflops_per_s": flops[kind] / sec / 1e9,
            "fraction_of_matmul_peak": flops[kind] / sec / peaks[dtype],
            "speedup_vs_best_keras_hub": hub_wall / sec if hub_wall else None,
            "cpu_speedup_vs_best_keras_hub": hub_cpu / cpu_sec if hub_cpu else None,
        })
    print(f"\nload before {load_before}, after {load_after}; {args.steps} interleaved rounds; "
          f"train FLOPs {flops['train'] / 1e9:.0f} G, infer FLOPs {flops['infer'] / 1e9:.0f} G")
    print("| case | median s (wall) | min-max s | CPU s | GFLOP/s | % of matmul peak "
          "| x best keras-hub (wall) | x best keras-hub (CPU s) |")
    print("|---|---|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: (r["kind"], r["median_s"])):
        ratios = [f"{r:.2f}" if r else "-" for r in (row["speedup_vs_best_keras_hub"],
                                                     row["cpu_speedup_vs_best_keras_hub"])]
        print(f"| {row['case']} | {row['median_s']:.2f} | {row['min_s']:.2f}-{row['max_s']:.2f} | "
              f"{row['median_cpu_s']:.2f} | {row['gflops_per_s']:.1f} | "
              f"{100 * row['fraction_of_matmul_peak']:.0f}% | {ratios[0]} | {ratios[1]} |")
    for kind in KINDS:
        floor = min((median(times[n]) for n in cases if meta[n][0] == "matmul_floor" and meta[n][3] == kind),
                    default=None)
        hub = best_hub(kind, times)
        if floor and hub:
            print(f"{kind}: best keras-hub / matmul floor = {hub / floor:.2f} (the largest speedup over "
                  f"keras-hub that a full-model implementation with these kernels can show in this run)")
    casts = {name: fn.casts() for name, fn in cases.items() if meta[name][0] in ("ours", "ours_reference", "keras_hub")}
    print("\n| case | float casts (ops) | elements cast (M) |\n|---|---|---|")
    for name, (ops, elements) in casts.items():
        print(f"| {name} | {ops} | {elements / 1e6:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "load_before": load_before, "load_after": load_after,
                       "matmul_flops_per_s": peaks, "rows": rows, "wall_s": times, "cpu_s": cpu,
                       "float_casts": casts},
                      f, indent=1)


if __name__ == "__main__":
    main()
