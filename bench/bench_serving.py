"""Serving latency on CPU: our exported classifier SavedModel vs ONNX Runtime running Hugging Face's
ALBERT, both built from the same weights.

One `AlbertClassifier` (random weights, 2 labels) is exported with each export kernel set
(`reference`, `cpu_serving`) and loaded back with `tf.saved_model.load`; the same weights are
written as an HF `AlbertForSequenceClassification` checkpoint
(`albert_tf.checkpoints.save_huggingface_checkpoint`), exported to ONNX with
`torch.onnx.export`, optimized with `onnxruntime.transformers` (float32) and, for the int8 row,
quantized with `onnxruntime.quantization.quantize_dynamic`. Cases, in interleaved rounds per
shape:

- `export_<kernels>`: the export's `serve_token_ids` signature (ids in, as ORT takes them);
  `_bf16` (with `--bf16`): the same model exported under the mixed_bfloat16 policy;
- `export_<kernels>_text`: its `serving_default` on raw text (tokenized in the graph);
- `in_process`: the classifier with the "cpu_inference" kernels in a `tf.function`;
- `ort_fp32`, `ort_int8`: ONNX Runtime on the same ids;
- `tflite_fp32`, `tflite_int8`: the LiteRT exports (`albert_tf.serving.tflite_export`: float32,
  dynamic-range int8) in `tf.lite.Interpreter` on the same ids (`--no_tflite` leaves them out);
- `ort_fp32_text`: HF's `AlbertTokenizer` (SentencePiece, the same model), then ORT.

Text rows are one sentence per example with exactly seq-2 pieces, so both sides see seq tokens.
Before timing, every case's logits are compared with the in-process model's (max |difference|).
At batch 1 each timed round is `--batch1_calls` calls (a single call of a few ms is too noisy).
TensorFlow keeps its default inter-op pool, as TF Serving does; `--inter_op_threads 1` runs one op
at a time, as ONNX Runtime's default executor does (TF Serving's `--tensorflow_inter_op_parallelism`).

    python bench/bench_serving.py --bf16 --rounds 7     # docs/serving.md's table
    taskset -c 1 python bench/bench_serving.py --bf16 --threads 1 --shapes 1x16,1x128   # one core
    python bench/bench_serving.py --config configs/albert_tiny.json --rounds 5 --shapes 1x16

Needs onnxruntime and onnx (requirements-dev.txt); `--no_onnx` times the TensorFlow cases only.
"""

import argparse
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from bench._common import cpu_flags, cpu_model, interleaved_medians, load_average, median, onednn_state  # noqa: E402

SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
WORDS = "the film is a charming and often affecting journey through memory , loss and 1990s music".split()


def parse_shapes(text):
    return [tuple(int(n) for n in shape.split("x")) for shape in text.split(",")]


def sentence_of(tokenizer, pieces):
    """A sentence that our Python tokenizer splits into exactly `pieces` pieces."""
    words = []
    while len(tokenizer.tokenize(" ".join(words))) < pieces:
        words.append(WORDS[len(words) % len(WORDS)])
    while len(tokenizer.tokenize(" ".join(words))) > pieces:
        words.pop()
    return " ".join(words)


def ids_batch(batch, seq, vocab, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocab, (batch, seq), dtype=np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    return {"input_word_ids": ids, "input_mask": np.ones((batch, seq), np.int32),
            "input_type_ids": np.zeros((batch, seq), np.int32)}


def build_exports(tf, models, kernel_sets, workdir):
    """{name: loaded SavedModel} for every (dtype name, model) in `models` and every kernel set."""
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier

    loaded = {}
    for suffix, model in models.items():
        for kernels in kernel_sets:
            name = kernels + suffix
            path = export_classifier(model, get_task("sst-2"), SPM_MODEL, os.path.join(workdir, name),
                                     max_seq_length=512, version=1, kernels=kernels)
            loaded[name] = tf.saved_model.load(path)
    return loaded


def build_tflite(tf, classifier, threads):
    """Signature runners of the classifier's LiteRT exports (float32, dynamic-range int8)."""
    from albert_tf.serving.tflite_export import tflite_classifier

    return {name: tf.lite.Interpreter(model_content=tflite_classifier(classifier, quantization),
                                      num_threads=threads).get_signature_runner()
            for name, quantization in (("tflite_fp32", "float32"), ("tflite_int8", "dynamic_int8"))}


def build_onnx(classifier, workdir, int8, spinning, threads):
    """ORT sessions (fp32 transformer-optimized; int8 dynamic) of HF's model with our weights."""
    import onnxruntime as ort
    import torch
    import transformers

    from albert_tf.checkpoints.huggingface import save_huggingface_checkpoint

    hf_dir = save_huggingface_checkpoint(classifier, os.path.join(workdir, "hf"), spm_model_file=SPM_MODEL)
    model = transformers.AlbertForSequenceClassification.from_pretrained(hf_dir).eval()
    raw = os.path.join(workdir, "albert.onnx")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(1, 8, dtype=torch.int64) for _ in names)
    axes = {name: {0: "batch", 1: "seq"} for name in names}
    with torch.no_grad():
        torch.onnx.export(model, dummy, raw, input_names=names, output_names=["logits"],
                          dynamic_axes={**axes, "logits": {0: "batch"}}, opset_version=17, dynamo=False)
    from onnxruntime.transformers import optimizer

    config = classifier.albert.config
    optimized = os.path.join(workdir, "albert_opt.onnx")
    optimizer.optimize_model(raw, model_type="bert", num_heads=config.num_attention_heads,
                             hidden_size=config.hidden_size).save_model_to_file(optimized)
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    if not spinning:  # idle worker threads sleep instead of spinning: on a shared CPU, spinning
        # threads take the cores that the busy ones need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sessions = {"ort_fp32": ort.InferenceSession(optimized, options, providers=["CPUExecutionProvider"])}
    if int8:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantized = os.path.join(workdir, "albert_int8.onnx")
        # The fused ops have no shape inference; their outputs are float32.
        quantize_dynamic(optimized, quantized, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        sessions["ort_int8"] = ort.InferenceSession(quantized, options, providers=["CPUExecutionProvider"])
    # The slow (SentencePiece) tokenizer: converting to the fast one needs a protobuf runtime
    # newer than this environment's.
    tokenizer = transformers.AlbertTokenizer.from_pretrained(hf_dir)
    return sessions, tokenizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "albert_base.json"))
    parser.add_argument("--shapes", default="1x16,1x128,32x128", help="BATCHxSEQ, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--export_kernels", default="reference,cpu_serving")
    parser.add_argument("--no_onnx", action="store_true", help="TensorFlow cases only")
    parser.add_argument("--no_text", action="store_true", help="token-id cases only")
    parser.add_argument("--text_max_batch", type=int, default=1, help="raw-text cases up to this batch size")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls of each case per shape")
    parser.add_argument("--batch1_calls", type=int, default=20,
                        help="calls per timed round at batch 1 (a single call of a few ms is too noisy to time)")
    parser.add_argument("--ort_spinning", action="store_true",
                        help="ONNX Runtime's default of spinning idle threads (off: they sleep)")
    parser.add_argument("--no_int8", action="store_true")
    parser.add_argument("--no_tflite", action="store_true", help="leave out the LiteRT exports")
    parser.add_argument("--threads", type=int, default=None,
                        help="intra-op threads of TensorFlow, ONNX Runtime and LiteRT (default: each "
                             "runtime's own, all cores); e.g. 1 under `taskset -c N` for a one-core comparison")
    parser.add_argument("--inter_op_threads", type=int, default=0,
                        help="TensorFlow's inter-op threads (TF Serving: --tensorflow_inter_op_parallelism); "
                             "0, the default: TensorFlow's own pool (one per core); 1: one op at a time, each "
                             "on all intra-op threads, as ONNX Runtime's default sequential executor runs")
    parser.add_argument("--bf16", action="store_true",
                        help="also export a mixed_bfloat16 copy (for CPUs with AVX-512 BF16 / AMX)")
    parser.add_argument("--no_float32_exports", action="store_true", help="only the --bf16 exports")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # results as they come, in a log too

    import tensorflow as tf

    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    if args.inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    from albert_tf import AlbertClassifier, AlbertConfig
    from albert_tf.kernels import with_kernels
    from albert_tf.tokenization import AlbertTokenizer

    print(f"cpu: {cpu_model()} [{cpu_flags()}], oneDNN {onednn_state()}, TF {tf.__version__}, "
          f"cores usable: {len(os.sched_getaffinity(0))}, threads: {args.threads or 'default'}, "
          f"TF inter-op threads: {args.inter_op_threads or 'default'}, load before: {load_average()}")
    config = AlbertConfig.from_json_file(args.config)
    tf.keras.utils.set_random_seed(0)
    classifier = AlbertClassifier(config, num_labels=2)
    in_process = with_kernels(classifier, "cpu_inference")
    direct = tf.function(lambda inputs: in_process(inputs, training=False)["logits"])
    workdir = tempfile.mkdtemp(prefix="bench_serving_")
    models = {} if args.no_float32_exports else {"": classifier}
    if args.bf16:
        models["_bf16"] = AlbertClassifier(config, num_labels=2, dtype="mixed_bfloat16")
        models["_bf16"].set_weights(classifier.get_weights())
    exports = build_exports(tf, models, args.export_kernels.split(","), workdir)
    sessions, hf_tokenizer = ({}, None) if args.no_onnx else build_onnx(classifier, workdir, not args.no_int8, args.ort_spinning, args.threads)
    runners = {} if args.no_tflite else build_tflite(tf, classifier, args.threads or os.cpu_count())
    our_tokenizer = AlbertTokenizer(SPM_MODEL)

    for batch, seq in parse_shapes(args.shapes):
        ids = ids_batch(batch, seq, config.vocab_size)
        tf_ids = {name: tf.constant(value) for name, value in ids.items()}
        ort_ids = {"input_ids": ids["input_word_ids"].astype(np.int64),
                   "attention_mask": ids["input_mask"].astype(np.int64),
                   "token_type_ids": ids["input_type_ids"].astype(np.int64)}
        texts = [sentence_of(our_tokenizer, seq - 2)] * batch
        text = not args.no_text and batch <= args.text_max_batch
        cases = {"in_process": lambda: direct(tf_ids).numpy()}
        for kernels, loaded in exports.items():
            signature = loaded.signatures["serve_token_ids"]
            cases[f"export_{kernels}"] = lambda s=signature: s(**tf_ids)["logits"].numpy()
            if text:
                text_signature = loaded.signatures["serving_default"]
                cases[f"export_{kernels}_text"] = (
                    lambda s=text_signature: s(sentence=tf.constant(texts))["logits"].numpy())
        for name, session in sessions.items():
            cases[name] = lambda s=session: s.run(["logits"], ort_ids)[0]
        for name, runner in runners.items():
            cases[name] = lambda r=runner: r(**ids)["logits"]
        if sessions and text:
            def ort_text(session=sessions["ort_fp32"]):
                encoded = hf_tokenizer(texts, padding=True, truncation=True, max_length=512, return_tensors="np")
                return session.run(["logits"], {k: encoded[k].astype(np.int64) for k in ort_ids})[0]
            cases["ort_fp32_text"] = ort_text

        reference = cases["in_process"]()
        for name, case in cases.items():
            if not name.endswith("_text"):
                print(f"  {batch}x{seq} {name}: max |logits - in_process| = {np.abs(case() - reference).max():.2e}")
        calls = args.batch1_calls if batch == 1 else 1
        timed = {name: (lambda case=case: [case() for _ in range(calls)]) for name, case in cases.items()}
        wall, cpu = interleaved_medians(timed, args.rounds, warmup=args.warmup)
        wall, cpu = ({name: [seconds / calls for seconds in values] for name, values in times.items()}
                     for times in (wall, cpu))
        print(f"batch {batch} x {seq} tokens, {args.rounds} rounds of {calls} call(s), load {load_average()}")
        base = median(wall["ort_fp32"]) if "ort_fp32" in wall else None
        for name in cases:
            ratio = f"  ort_fp32 / this = {base / median(wall[name]):.2f}" if base else ""
            print(f"  {name:28s} wall {1000 * median(wall[name]):9.1f} ms  cpu {1000 * median(cpu[name]):9.1f} ms{ratio}")
    print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
