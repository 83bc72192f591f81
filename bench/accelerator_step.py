"""albert-base's training step and batch inference on whatever device the Keras backend sees:
ours beside keras-hub's `AlbertBackbone` (when keras-hub is importable), same shapes.

Needs keras, numpy and the backend (jax or torch; tensorflow works too), no data files: the model
comes from a config and the inputs are random ids. Prints the device, then per system and kind the
median time per step and TFLOP/s (analytic FLOPs, `bench/albert_workload.py`). Both systems run
through Keras' own `train_on_batch` / `predict_on_batch` with `jit_compile="auto"` (XLA on JAX and
TensorFlow, eager on PyTorch), the project's LAMB with global-norm clipping at 1.0, the MLM + SOP
cross-entropy, and no dropout; cases are timed in interleaved rounds (`bench/_common.py`).

    KERAS_BACKEND=jax python bench/accelerator_step.py
    KERAS_BACKEND=torch python bench/accelerator_step.py --config configs/albert_tiny.json --steps 2
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._common import cpu_model, interleaved_medians, load_average, median  # noqa: E402
from albert_tf.kernels import KERNELS_FLAG_VALUES, choose  # noqa: E402
from bench.albert_workload import BASE_CONFIG, LEARNING_RATE, WEIGHT_DECAY, make_inputs, model_flops  # noqa: E402

SYSTEMS = ("ours", "keras_hub")
KINDS = ("train", "infer")
BACKBONE_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def add_workload_flags(parser):
    """The model and shapes flags (also bench_backends.py's, which passes them on)."""
    parser.add_argument("--config", default=BASE_CONFIG, help="an albert_config.json (default: albert-base)")
    parser.add_argument("--train_batch", type=int, default=8)
    parser.add_argument("--infer_batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--masked", type=int, default=20, help="masked positions per sequence")
    parser.add_argument("--steps", type=int, default=5, help="timed rounds (each runs every case once)")
    parser.add_argument("--kernels", default="auto", choices=KERNELS_FLAG_VALUES,
                        help="our model's kernel set (default auto: what the commands' --kernels=auto picks on "
                             "this backend; reference: the plain path)")


def comma_list(parser, flag, value, allowed):
    """`value` split at commas; a parser error (exit 2) unless it names some of `allowed` only."""
    names = [name for name in value.split(",") if name]
    if not names or not set(names) <= set(allowed):
        parser.error(f"--{flag}: pick from {','.join(allowed)}, got {','.join(names) or 'nothing'}")
    return names


def add_systems_flag(parser):
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help="comma-separated, from ours,keras_hub (keras_hub is left out when not importable)")


def check_shape_flags(parser, args, positive):
    """A parser error (exit 2) unless the `positive` flags are at least 1 and --masked fits in --seq."""
    for flag in positive:
        if getattr(args, flag) < 1:
            parser.error(f"--{flag}: expected a positive number, got {getattr(args, flag)}")
    if not 0 < args.masked < args.seq:
        parser.error(f"--masked: expected 1 to --seq - 1 ({args.seq - 1}), got {args.masked}")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_flags(parser)
    add_systems_flag(parser)
    parser.add_argument("--json", help="also write the results here")
    return checked_flags(parser, parser.parse_args(argv))


def checked_flags(parser, args):
    """`args` with `systems` a list, `kernels` the set (auto decided) and `config_dict` the config
    read; a parser error (exit 2) for a bad workload flag."""
    args.systems = comma_list(parser, "systems", args.systems, SYSTEMS)
    check_shape_flags(parser, args, ("train_batch", "infer_batch", "seq", "steps"))
    try:
        args.kernels = choose(args.kernels)
    except ValueError as error:
        parser.error(f"--kernels: {error}")
    try:
        with open(args.config) as f:
            args.config_dict = dict(json.load(f), hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    except (OSError, ValueError) as error:
        parser.error(f"--config: cannot read {args.config} as an albert_config.json ({error})")
    return args


def device_name():
    """What the backend computes on, as it names it."""
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        return f"jax {jax.__version__}: {device.platform} ({device.device_kind})"
    if backend == "torch":
        import torch

        if torch.cuda.is_available():
            return f"torch {torch.__version__}: cuda ({torch.cuda.get_device_name(0)})"
        return f"torch {torch.__version__}: cpu"
    if backend == "tensorflow":
        import tensorflow as tf

        devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
        return f"tensorflow {tf.__version__}: {devices[0].name}"
    return backend


def backbone_inputs():
    import keras

    return {name: keras.Input((None,), dtype="int32", name=name) for name in BACKBONE_INPUTS}


def ours_models(cfg, kernels):
    """(pretraining model with [mlm_logits, sop_logits] outputs, backbone with [sequence, pooled])."""
    import keras

    from albert_tf.config import AlbertConfig
    from albert_tf.models import AlbertModel, AlbertPretrainingModel

    config = AlbertConfig.from_dict(cfg)
    pretraining = AlbertPretrainingModel(config, kernels=kernels)
    inputs = dict(backbone_inputs(), masked_lm_positions=keras.Input((None,), dtype="int32",
                                                                     name="masked_lm_positions"))
    outputs = pretraining(inputs)
    train = keras.Model(inputs, [outputs["mlm_logits"], outputs["sop_logits"]], name="ours_train")
    backbone = AlbertModel(config, kernels=kernels)
    inputs = backbone_inputs()
    outputs = backbone(inputs)
    return train, keras.Model(inputs, [outputs["sequence_output"], outputs["pooled_output"]], name="ours_infer")


def keras_hub_models(cfg):
    """keras-hub's AlbertBackbone with its MaskedLMHead (tied) and a Dense(2) SOP head, and the
    backbone alone; taking our input names, so that both systems are fed the same batches."""
    import keras
    import keras_hub

    def backbone_on(inputs):
        backbone = keras_hub.models.AlbertBackbone(
            vocabulary_size=cfg["vocab_size"], num_layers=cfg["num_hidden_layers"],
            num_heads=cfg["num_attention_heads"], embedding_dim=cfg["embedding_size"],
            hidden_dim=cfg["hidden_size"], intermediate_dim=cfg["intermediate_size"],
            num_groups=cfg["num_hidden_groups"], dropout=0.0,
            max_sequence_length=cfg["max_position_embeddings"])
        outputs = backbone({"token_ids": inputs["input_word_ids"], "segment_ids": inputs["input_type_ids"],
                            "padding_mask": inputs["input_mask"]})
        return backbone, outputs

    inputs = dict(backbone_inputs(), masked_lm_positions=keras.Input((None,), dtype="int32",
                                                                     name="masked_lm_positions"))
    backbone, outputs = backbone_on(inputs)
    mlm_head = keras_hub.layers.MaskedLMHead(
        vocabulary_size=cfg["vocab_size"], token_embedding=backbone.token_embedding,
        intermediate_activation=lambda x: keras.activations.gelu(x, approximate=True),
        layer_norm_epsilon=1e-12)
    mlm_logits = mlm_head(outputs["sequence_output"], mask_positions=inputs["masked_lm_positions"])
    train = keras.Model(inputs, [mlm_logits, keras.layers.Dense(2)(outputs["pooled_output"])], name="hub_train")
    inputs = backbone_inputs()
    _, outputs = backbone_on(inputs)
    return train, keras.Model(inputs, [outputs["sequence_output"], outputs["pooled_output"]], name="hub_infer")


def cases_for(train_model, infer_model, train_batch, infer_batch):
    """{"train": one compiled optimizer step, "infer": one batch's outputs}, each run to completion."""
    import keras

    from albert_tf.training.optimization import Lamb

    cross_entropy = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_model.compile(optimizer=Lamb(learning_rate=LEARNING_RATE, weight_decay_rate=WEIGHT_DECAY,
                                       global_clipnorm=1.0),
                        loss=[cross_entropy, cross_entropy], jit_compile="auto")
    features = {name: train_batch[name] for name in BACKBONE_INPUTS + ("masked_lm_positions",)}
    # Every masked position has weight 1 here, so the plain mean is the original's weighted mean.
    labels = [train_batch["masked_lm_ids"], train_batch["sentence_order_label"]]
    infer_features = {name: infer_batch[name] for name in BACKBONE_INPUTS}
    return {"train": lambda: train_model.train_on_batch(features, labels),  # the losses, as Python floats
            "infer": lambda: infer_model.predict_on_batch(infer_features)}


def available_systems(wanted):
    """`wanted`, less keras_hub when it cannot be imported (said on stderr)."""
    systems = list(wanted)
    if "keras_hub" in systems:
        try:
            import keras_hub  # noqa: F401
        except ImportError as error:
            print(f"keras_hub: not measured ({error})", file=sys.stderr)
            systems.remove("keras_hub")
    return systems


def main(argv=None):
    args = parse_args(argv)
    import keras

    cfg = args.config_dict
    train_batch = make_inputs(args.train_batch, args.seq, args.masked, cfg["vocab_size"])
    infer_batch = make_inputs(args.infer_batch, args.seq, args.masked, cfg["vocab_size"], seed=1)
    device = device_name()
    print(f"device: {device}; keras {keras.__version__} ({keras.backend.backend()}); kernels: {args.kernels}; "
          f"cpu: {cpu_model()} x{os.cpu_count()}; load {load_average()}", flush=True)

    cases = {}
    for system in available_systems(args.systems):
        print(f"building {system} ...", file=sys.stderr, flush=True)
        models = ours_models(cfg, args.kernels) if system == "ours" else keras_hub_models(cfg)
        for kind, run in cases_for(*models, train_batch, infer_batch).items():
            cases[(system, kind)] = run
    print(f"timing {len(cases)} cases, {args.steps} round(s) after one untimed (compiling) call ...",
          file=sys.stderr, flush=True)
    wall, _ = interleaved_medians(cases, args.steps, on_round=lambda index, _: print(
        f"  round {index + 1}/{args.steps}", file=sys.stderr, flush=True))

    rows = []
    for (system, kind), seconds in wall.items():
        batch = args.train_batch if kind == "train" else args.infer_batch
        flops = model_flops(cfg, batch, args.seq, args.masked, kind)
        step = median(seconds)
        rows.append({"system": system, "kind": kind, "batch": batch, "seq": args.seq,
                     "seconds_per_step": step, "tflops_per_second": flops / step / 1e12})
        print(f"{system:10s} {kind:5s} batch {batch:3d} x {args.seq}: {step * 1e3:9.1f} ms/step "
              f"{flops / step / 1e12:8.4f} TFLOP/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": keras.backend.backend(), "device": device, "cpu": cpu_model(),
                       "load_average": load_average(), "kernels": args.kernels, "config": args.config,
                       "steps": args.steps, "masked": args.masked, "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
