"""Pretraining throughput and memory: the trainer vs the bare model vs keras-hub's ALBERT.

Each measurement runs in a fresh process (so logical CPU devices can be set and peak RSS is
its own) and prints one JSON line; the driver prints a Markdown table. Examples/s count whole
optimizer steps (forward, backward, LAMB) after warm-up:

- `trainer`: `PretrainingTrainer` on its strategy, fed by the real TFRecord input pipeline.
- `bare`: our `AlbertPretrainingModel`, same loss and LAMB, one `tf.function` on in-memory batches.
- `keras_hub`: `keras_hub.models.AlbertBackbone` + tied `MaskedLMHead` + SOP dense, same loss,
  same optimizer, same in-memory batches.

    python bench/bench_pretraining.py --config=configs/albert_base.json --seq=128 --batch=8
    python bench/bench_pretraining.py --memory  # peak RSS per example at seq 512 (base, large)
    python bench/bench_pretraining.py --interleaved --steps=5  # one process, alternating rounds
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)
from albert_cli.cli import prefer_onednn  # noqa: E402

prefer_onednn()  # TensorFlow's oneDNN CPU kernels, as the scripts ask for them, for every system alike

PREDICTIONS = 20


def random_features(batch, seq, vocab, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return {
        "input_word_ids": rng.integers(5, vocab, (batch, seq)).astype(np.int32),
        "input_mask": np.ones((batch, seq), np.int32),
        "input_type_ids": (np.arange(seq)[None, :] >= seq // 2).repeat(batch, 0).astype(np.int32),
        "masked_lm_positions": np.sort(rng.choice(np.arange(1, seq), (batch, PREDICTIONS)), axis=1).astype(np.int32),
        "masked_lm_ids": rng.integers(5, vocab, (batch, PREDICTIONS)).astype(np.int32),
        "masked_lm_weights": np.ones((batch, PREDICTIONS), np.float32),
        "next_sentence_labels": rng.integers(0, 2, batch).astype(np.int32),
    }


def write_records(path, count, seq, vocab):
    import tensorflow as tf

    features = random_features(count, seq, vocab)
    renames = {"input_word_ids": "input_ids", "input_type_ids": "segment_ids"}
    with tf.io.TFRecordWriter(path) as writer:
        for index in range(count):
            example = {}
            for name, values in features.items():
                row = values[index].reshape(-1)
                key = renames.get(name, name)
                if row.dtype.kind == "f":
                    example[key] = tf.train.Feature(float_list=tf.train.FloatList(value=row))
                else:
                    example[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=row.astype("int64")))
            writer.write(tf.train.Example(features=tf.train.Features(feature=example)).SerializeToString())


def keras_hub_model(config, dtype):
    import keras
    import keras_hub

    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
        num_groups=config.num_hidden_groups, num_inner_repetitions=config.inner_group_num,
        embedding_dim=config.embedding_size, hidden_dim=config.hidden_size, intermediate_dim=config.intermediate_size,
        dropout=0.0, max_sequence_length=config.max_position_embeddings, dtype=dtype,
    )
    mlm_head = keras_hub.layers.MaskedLMHead(
        vocabulary_size=config.vocab_size, token_embedding=backbone.token_embedding, intermediate_activation="gelu", dtype=dtype,
    )
    sop_head = keras.layers.Dense(2, dtype=dtype)

    def forward(features, training):
        outputs = backbone({"token_ids": features["input_word_ids"], "segment_ids": features["input_type_ids"],
                            "padding_mask": features["input_mask"]}, training=training)
        return {"mlm_logits": keras.ops.cast(mlm_head(outputs["sequence_output"], features["masked_lm_positions"]), "float32"),
                "sop_logits": keras.ops.cast(sop_head(outputs["pooled_output"]), "float32")}

    forward(random_features(1, 8, config.vocab_size), False)
    return forward, backbone.trainable_variables + mlm_head.trainable_variables + sop_head.trainable_variables


def ours_model(config, dtype):
    from albert_tf import AlbertPretrainingModel

    model = AlbertPretrainingModel(config, dtype=dtype, kernels="cpu")  # what --kernels=auto picks on a CPU
    names = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")
    return (lambda features, training: model({n: features[n] for n in names}, training=training)), model.trainable_variables


def bare_step(kind, config, batch, seq, dtype, jit_compile=False):
    """A callable running one optimizer step of the bare model ("bare") or keras-hub's (XLA if asked)."""
    import tensorflow as tf

    from albert_tf.training import optimization, replica_update
    from albert_tf.pretraining.losses import pretraining_losses

    forward, variables = (ours_model if kind == "bare" else keras_hub_model)(config, dtype)
    optimizer = optimization.create_optimizer("lamb", 1e-4, 1000, 10)
    optimizer.build(variables)
    features = {name: tf.constant(value) for name, value in random_features(batch, seq, config.vocab_size).items()}

    @tf.function(jit_compile=jit_compile)
    def step():
        with tf.GradientTape() as tape:
            losses = pretraining_losses(forward(features, True), features, tf.reduce_sum(features["masked_lm_weights"]), batch)
        gradients = tape.gradient(losses.loss, variables)
        replica_update.apply_gradients_across_replicas(optimizer, gradients, variables)
        return losses.loss

    return lambda: step().numpy()


def trainer_step(config, batch, seq, dtype, replicas, directory, jit_compile=False):
    """A callable running one step of `PretrainingTrainer`, fed from TFRecords in `directory`."""
    from albert_tf.training import distribute
    from albert_tf.pretraining.trainer import PretrainingTrainer, TrainerSettings
    from albert_tf.pretraining.data import pretraining_dataset

    strategy = distribute.get_strategy("mirrored" if replicas > 1 else "one_device")
    settings = TrainerSettings(train_batch_size=batch, num_train_steps=1000, learning_rate=1e-4, num_warmup_steps=10,
                               mixed_precision=dtype or "float32", jit_compile=jit_compile,
                               kernels="cpu")  # what --kernels=auto picks on a CPU
    trainer = PretrainingTrainer(strategy, config, settings)
    path = os.path.join(directory, "bench_xla.tfrecord" if jit_compile else "bench.tfrecord")  # one file per trainer
    write_records(path, batch * 4, seq, config.vocab_size)
    dataset = distribute.distribute_datasets(
        strategy, lambda context: pretraining_dataset(path, seq, PREDICTIONS, batch, input_context=context, seed=1,
                                                      shuffle_buffer_size=batch * 4))
    iterator = iter(dataset)

    def step():
        trainer.train_loop(iterator, 1)
        trainer.optimizer.iterations.numpy()

    return step


def seconds_for(step, steps, warmup):
    for _ in range(warmup):
        step()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    return time.perf_counter() - started


def interleaved(args):
    """Trainer and keras-hub (each with and without XLA) and the bare model in ONE process,
    alternating rounds.

    On a shared machine this is the fairer overhead measure: load bursts hit all three alike.
    """
    from albert_tf import AlbertConfig
    from bench._common import interleaved_medians, median

    config = AlbertConfig.from_json_file(args.config)
    names = ("trainer", "trainer_xla", "bare", "keras_hub", "keras_hub_xla")
    rows = ["| dtype | " + " | ".join(f"{n} ex/s (wall)" for n in names) + " | "
            + " | ".join(f"{n} CPU s/step" for n in names)
            + " | trainer overhead (CPU s) | best trainer / best keras-hub (CPU s) | loadavg |",
            "|---|" + "---|" * (2 * len(names) + 3)]
    for dtype in args.dtypes.split(","):
        dtype_arg = None if dtype == "float32" else dtype
        with tempfile.TemporaryDirectory() as directory:
            cases = {"trainer": trainer_step(config, args.batch, args.seq, dtype_arg, 1, directory),
                     "trainer_xla": trainer_step(config, args.batch, args.seq, dtype_arg, 1, directory, jit_compile=True),
                     "bare": bare_step("bare", config, args.batch, args.seq, dtype_arg),
                     "keras_hub": bare_step("keras_hub", config, args.batch, args.seq, dtype_arg),
                     "keras_hub_xla": bare_step("keras_hub", config, args.batch, args.seq, dtype_arg, jit_compile=True)}
            wall, cpu = interleaved_medians(cases, args.steps, warmup=args.warmup)
        ex = {name: args.batch / median(times) for name, times in wall.items()}
        c = {name: median(times) for name, times in cpu.items()}
        hub_best, trainer_best = min(c["keras_hub"], c["keras_hub_xla"]), min(c["trainer"], c["trainer_xla"])
        rows.append(f"| {dtype} | " + " | ".join(f"{ex[n]:.2f}" for n in names) + " | "
                    + " | ".join(f"{c[n]:.2f}" for n in names)
                    + f" | {c['trainer'] / c['bare'] - 1:+.1%} | {hub_best / trainer_best:.2f} | "
                    f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} |")
    return "\n".join(rows)


def worker(args):
    if args.replicas > 1:
        from albert_tf.training.distribute import split_cpu

        split_cpu(args.replicas)
    from albert_tf import AlbertConfig

    config = AlbertConfig.from_json_file(args.config)
    dtype = None if args.dtype == "float32" else args.dtype
    with tempfile.TemporaryDirectory() as directory:
        if args.kind == "trainer":
            step = trainer_step(config, args.batch, args.seq, dtype, args.replicas, directory)
        else:
            step = bare_step(args.kind, config, args.batch, args.seq, dtype)
        seconds = seconds_for(step, args.steps, args.warmup)
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"kind": args.kind, "config": os.path.basename(args.config), "seq": args.seq, "batch": args.batch,
                      "dtype": args.dtype, "replicas": args.replicas, "steps": args.steps,
                      "examples_per_second": args.batch * args.steps / seconds, "peak_rss_mib": peak_rss_mib,
                      "loadavg": os.getloadavg()}))


def spawn(args, **overrides):
    settings = dict(config=args.config, seq=args.seq, batch=args.batch, dtype="float32", steps=args.steps,
                    warmup=args.warmup, replicas=1, kind="trainer")
    settings.update(overrides)
    command = [sys.executable, os.path.abspath(__file__), "--worker"] + [f"--{k}={v}" for k, v in settings.items()]
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    record = json.loads(result.stdout.strip().splitlines()[-1])
    print(json.dumps(record), file=sys.stderr, flush=True)
    return record


def throughput_table(args):
    rows = ["| dtype | trainer (ex/s) | bare model (ex/s) | trainer overhead | keras-hub (ex/s) | ours bare / keras-hub | loadavg |",
            "|---|---|---|---|---|---|---|"]
    for dtype in args.dtypes.split(","):
        trainer = spawn(args, dtype=dtype, kind="trainer")
        bare = spawn(args, dtype=dtype, kind="bare")
        hub = spawn(args, dtype=dtype, kind="keras_hub")
        overhead = bare["examples_per_second"] / trainer["examples_per_second"] - 1
        rows.append(f"| {dtype} | {trainer['examples_per_second']:.2f} | {bare['examples_per_second']:.2f} | {overhead:+.1%} | "
                    f"{hub['examples_per_second']:.2f} | {bare['examples_per_second'] / hub['examples_per_second']:.2f} | "
                    f"{' '.join(f'{x:.1f}' for x in hub['loadavg'])} |")
    two = spawn(args, kind="trainer", replicas=2)
    one = spawn(args, kind="trainer", replicas=1)
    rows.append("")
    rows.append(f"float32 trainer, 1 replica: {one['examples_per_second']:.2f} ex/s; MirroredStrategy over 2 logical CPUs: "
                f"{two['examples_per_second']:.2f} ex/s (x{two['examples_per_second'] / one['examples_per_second']:.2f}; "
                f"loadavg {' '.join(f'{x:.1f}' for x in two['loadavg'])})")
    return "\n".join(rows)


def memory_table(args):
    rows = ["| config | peak RSS, batch 1 (MiB) | peak RSS, batch 2 (MiB) | MiB per example (slope) |", "|---|---|---|---|"]
    for config in ("albert_base.json", "albert_large.json"):
        path = os.path.join(REPO_ROOT, "configs", config)
        small, large = (spawn(args, config=path, seq=512, batch=b, kind="bare", steps=1, warmup=0) for b in (1, 2))
        rows.append(f"| {config} | {small['peak_rss_mib']:.0f} | {large['peak_rss_mib']:.0f} | "
                    f"{large['peak_rss_mib'] - small['peak_rss_mib']:.0f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=os.path.join(REPO_ROOT, "configs", "albert_base.json"))
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--dtypes", default="float32,mixed_bfloat16")
    parser.add_argument("--memory", action="store_true", help="measure peak RSS per example at seq 512 instead")
    parser.add_argument("--interleaved", action="store_true",
                        help="trainer, bare and keras-hub in one process, alternating steps (CPU s and wall)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="trainer", choices=("trainer", "bare", "keras_hub"), help=argparse.SUPPRESS)
    parser.add_argument("--dtype", default="float32", help=argparse.SUPPRESS)
    parser.add_argument("--replicas", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
    else:
        from bench._common import onednn_state

        print(f"oneDNN: {onednn_state()}", flush=True)
        print(memory_table(args) if args.memory else interleaved(args) if args.interleaved else throughput_table(args))


if __name__ == "__main__":
    main()
