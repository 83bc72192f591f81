"""Serving latency on CPU: our exported classifier SavedModel vs ONNX Runtime running Hugging Face's
ALBERT, both built from the same weights.

One `AlbertClassifier` (random weights, 2 labels) is exported with each export kernel set
(`reference`, `cpu_serving`) and loaded back with `tf.saved_model.load`; the same weights are
written as an HF `AlbertForSequenceClassification` checkpoint
(`albert_tf.checkpoints.save_huggingface_checkpoint`), exported to ONNX with
`torch.onnx.export`, optimized with `onnxruntime.transformers` (float32) and, for the int8 row,
quantized with `onnxruntime.quantization.quantize_dynamic`. Cases, at every
shape:

- `export_<kernels>`: the export's `serve_token_ids` signature (ids in, as ORT takes them);
  `_bf16` (with `--bf16`): the same model exported under the mixed_bfloat16 policy;
- `export_<kernels>_text`: its `serving_default` on raw text (tokenized in the graph);
- `in_process`: the classifier with the "cpu_inference" kernels in a `tf.function`;
- `ort_fp32`, `ort_int8`: ONNX Runtime on the same ids;
- `tflite_fp32`, `tflite_int8`: the LiteRT exports (`albert_tf.serving.serving_tflite`: float32,
  dynamic-range int8) in LiteRT's interpreter (`ai_edge_litert`) on the same ids (`--no_tflite` leaves them out);
- `ort_fp32_text`: HF's `AlbertTokenizer` (SentencePiece, the same model), then ORT.

Text rows are one sentence per example with exactly seq-2 pieces, so both sides see seq tokens.
Every case's logits are compared with the in-process model's (max |difference|).
At batch 1 each timed round is `--batch1_calls` calls (a single call of a few ms is too noisy).
TensorFlow keeps its default inter-op pool, as TF Serving does; `--inter_op_threads 1` runs one op
at a time, as ONNX Runtime's default executor does (TF Serving's `--tensorflow_inter_op_parallelism`).

By default every case of every round runs in a fresh process of its own (this script with the
internal `--worker_case`), which loads only that case's model, as a server would: no case inherits
another's thread pools, caches or memory, and ONNX Runtime runs at its own defaults (no thread or
spinning options). Each round runs the cases in an order rotated by one, so a burst of load from
elsewhere does not always hit the same case; the table gives medians over the `--rounds` rounds.
`--in_process` times every case in this one process in interleaved rounds instead (ORT's idle threads
then sleep unless `--ort_spinning`). The processor and the load average at start and end are printed.

    python bench/bench_serving.py --bf16 --rounds 3     # each case in its own process
    python bench/bench_serving.py --bf16 --rounds 7 --in_process     # docs/serving.md's table
    taskset -c 1 python bench/bench_serving.py --bf16 --threads 1 --shapes 1x16,1x128   # one core
    python bench/bench_serving.py --config configs/albert_tiny.json --rounds 5 --shapes 1x16

Needs onnxruntime and onnx (requirements-dev.txt); `--no_onnx` times the TensorFlow cases only.
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time

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


def write_exports(classifier, dtypes, kernel_sets, workdir):
    """{name: SavedModel path} of `classifier` for every (name suffix, dtype policy) in `dtypes` and every
    kernel set."""
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier

    return {kernels + suffix: export_classifier(classifier, get_task("sst-2"), SPM_MODEL,
                                                os.path.join(workdir, kernels + suffix), max_seq_length=512,
                                                version=1, kernels=kernels, dtype=dtype)
            for suffix, dtype in dtypes.items() for kernels in kernel_sets}


def write_tflite(classifier, workdir):
    """{name: path} of the classifier's LiteRT exports (float32, dynamic-range int8)."""
    from albert_tf.serving.serving_tflite import tflite_classifier

    paths = {}
    for name, quantization in (("tflite_fp32", "float32"), ("tflite_int8", "dynamic_int8")):
        paths[name] = os.path.join(workdir, f"{name}.tflite")
        with open(paths[name], "wb") as f:
            f.write(tflite_classifier(classifier, quantization))
    return paths


def export_onnx(classifier, workdir, int8):
    """({name: ONNX path}, HF checkpoint dir) of HF's model with our weights: fp32 transformer-optimized,
    int8 dynamically quantized."""
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
    paths = {"ort_fp32": os.path.join(workdir, "albert_opt.onnx")}
    optimizer.optimize_model(raw, model_type="bert", num_heads=config.num_attention_heads,
                             hidden_size=config.hidden_size).save_model_to_file(paths["ort_fp32"])
    if int8:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        paths["ort_int8"] = os.path.join(workdir, "albert_int8.onnx")
        # The fused ops have no shape inference; their outputs are float32.
        quantize_dynamic(paths["ort_fp32"], paths["ort_int8"], weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return paths, hf_dir


def ort_session(path, spinning=None, threads=None):
    """An ORT CPU session; None leaves ONNX Runtime's own default (spinning idle threads, all cores).
    spinning=False: idle worker threads sleep (on a shared CPU, spinning threads take the cores that
    the busy ones need)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    if spinning is False:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def ort_inputs(ids):
    """Our int32 `serve_token_ids` inputs under HF's names, int64 as the ONNX graph takes them."""
    return {"input_ids": ids["input_word_ids"].astype(np.int64),
            "attention_mask": ids["input_mask"].astype(np.int64),
            "token_type_ids": ids["input_type_ids"].astype(np.int64)}


@functools.lru_cache(maxsize=None)
def load_runtime(kind, path, threads=None, spinning=None):
    """Each model is loaded once per process, whatever cases share it."""
    import tensorflow as tf

    if kind == "saved_model":
        import tensorflow_text  # noqa: F401  registers the SentencePiece ops the graph holds

        return tf.saved_model.load(path)
    if kind == "onnx":
        return ort_session(path, spinning, threads)
    if kind == "tflite":
        from ai_edge_litert.interpreter import Interpreter

        return Interpreter(model_path=path, num_threads=threads or os.cpu_count()).get_signature_runner()
    if kind == "hf_tokenizer":  # from the export's tokenizer.json (save_huggingface_checkpoint)
        import transformers

        return transformers.AlbertTokenizer.from_pretrained(path)
    raise ValueError(f"kind: unknown {kind!r}")


@functools.lru_cache(maxsize=None)
def in_process_model(config_file, weights_file):
    """The classifier with the "cpu_inference" kernels in a `tf.function`, from the saved weights."""
    import tensorflow as tf

    from albert_tf import AlbertClassifier, AlbertConfig
    from albert_tf.models import rebuilt

    config = AlbertConfig.from_json_file(config_file)
    classifier = AlbertClassifier(config, num_labels=2)
    classifier({name: tf.constant(value) for name, value in ids_batch(1, 8, config.vocab_size).items()})
    classifier.load_weights(weights_file)
    model = rebuilt(classifier, kernels="cpu_inference")

    @tf.function
    def logits(inputs):
        return model(inputs, training=False)["logits"]
    return logits


def case_names(args, batch):
    """Every case at one batch size, in table order (before `--cases` picks some)."""
    text = not args.no_text and batch <= args.text_max_batch
    names = ["in_process"]
    for suffix in ([] if args.no_float32_exports else [""]) + (["_bf16"] if args.bf16 else []):
        for kernels in args.export_kernels.split(","):
            names += [f"export_{kernels}{suffix}"] + ([f"export_{kernels}{suffix}_text"] if text else [])
    onnx = [] if args.no_onnx else ["ort_fp32"] + ([] if args.no_int8 else ["ort_int8"])
    names += onnx + ([] if args.no_tflite else ["tflite_fp32", "tflite_int8"])
    return names + (["ort_fp32_text"] if onnx and text else [])


def case_function(plan, name, batch, seq):
    """A zero-argument callable running case `name` once on a batch x seq request; returns the logits."""
    import tensorflow as tf

    from albert_tf import AlbertConfig

    ids = ids_batch(batch, seq, AlbertConfig.from_json_file(plan["config"]).vocab_size)
    tf_ids = {key: tf.constant(value) for key, value in ids.items()}
    if name.endswith("_text"):
        from albert_tf.text.tokenization import AlbertTokenizer

        texts = [sentence_of(AlbertTokenizer(SPM_MODEL), seq - 2)] * batch
    threads, spinning = plan["threads"], plan["ort_spinning"]
    if name == "in_process":
        model = in_process_model(plan["config"], plan["weights"])
        return lambda: model(tf_ids).numpy()
    if name.startswith("export_"):
        loaded = load_runtime("saved_model", plan["exports"][name[len("export_"):].removesuffix("_text")])
        if name.endswith("_text"):
            signature, sentences = loaded.signatures["serving_default"], tf.constant(texts)
            return lambda: signature(sentence=sentences)["logits"].numpy()
        signature = loaded.signatures["serve_token_ids"]
        return lambda: signature(**tf_ids)["logits"].numpy()
    if name == "ort_fp32_text":
        session = load_runtime("onnx", plan["onnx"]["ort_fp32"], threads, spinning)
        tokenizer = load_runtime("hf_tokenizer", plan["hf_dir"])

        def ort_text():
            encoded = tokenizer(texts, padding=True, truncation=True, max_length=512, return_tensors="np")
            return session.run(["logits"], {key: encoded[key].astype(np.int64) for key in ort_inputs(ids)})[0]
        return ort_text
    if name in plan["onnx"]:
        session, inputs = load_runtime("onnx", plan["onnx"][name], threads, spinning), ort_inputs(ids)
        return lambda: session.run(["logits"], inputs)[0]
    runner = load_runtime("tflite", plan["tflite"][name], threads)
    return lambda: runner(**ids)["logits"]


def set_tf_threads(tf, threads, inter_op_threads):
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    if inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(inter_op_threads)


def run_worker(plan_file, name, shape, calls, warmup):
    """One case in this (fresh) process: `warmup` untimed calls, then `calls` timed ones; prints one JSON
    line with the seconds per call, the logits and this process's id."""
    import tensorflow as tf

    with open(plan_file) as f:
        plan = json.load(f)
    set_tf_threads(tf, plan["threads"], plan["inter_op_threads"])
    case = case_function(plan, name, *shape)
    logits = case()
    for _ in range(warmup):
        case()
    start, start_cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        case()
    print(json.dumps({"wall": (time.perf_counter() - start) / calls, "cpu": (time.process_time() - start_cpu) / calls,
                      "logits": np.asarray(logits, np.float64).tolist(), "pid": os.getpid()}))


def time_in_fresh_processes(plan_file, names, shape, rounds, calls, warmup):
    """Every case of every round in a process of its own, rotating the order by one case per round.

    Returns (wall, cpu, logits, pids): per case the per-round seconds per call, the logits, the process ids.
    """
    wall, cpu, logits, pids = ({name: [] for name in names} for _ in range(4))
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            command = [sys.executable, os.path.abspath(__file__), "--worker_plan", plan_file, "--worker_case", name,
                       "--shapes", "x".join(map(str, shape)), "--batch1_calls", str(calls), "--warmup", str(warmup)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"case {name} at {shape} failed in its process:\n{done.stderr[-3000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            wall[name].append(result["wall"])
            cpu[name].append(result["cpu"])
            logits[name] = np.array(result["logits"])
            pids[name].append(result["pid"])
    return wall, cpu, logits, pids


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "albert_base.json"))
    parser.add_argument("--shapes", default="1x16,1x128,32x128", help="BATCHxSEQ, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in_process", action="store_true",
                        help="time every case in this one process (interleaved rounds) instead of each in a fresh "
                             "process; ONNX Runtime's idle threads then sleep unless --ort_spinning")
    parser.add_argument("--cases", default="", help="only these cases (comma-separated names, as printed)")
    parser.add_argument("--export_kernels", default="reference,cpu_serving")
    parser.add_argument("--no_onnx", action="store_true", help="TensorFlow cases only")
    parser.add_argument("--no_text", action="store_true", help="token-id cases only")
    parser.add_argument("--text_max_batch", type=int, default=1, help="raw-text cases up to this batch size")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls of each case per shape")
    parser.add_argument("--batch1_calls", type=int, default=20,
                        help="calls per timed round at batch 1 (a single call of a few ms is too noisy to time)")
    parser.add_argument("--ort_spinning", action="store_true",
                        help="with --in_process: ONNX Runtime's default of spinning idle threads (off: they sleep); "
                             "each fresh process runs ONNX Runtime at its own defaults")
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
    parser.add_argument("--worker_plan", help=argparse.SUPPRESS)  # internal: run one case in this process
    parser.add_argument("--worker_case", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_plan:
        return run_worker(args.worker_plan, args.worker_case, parse_shapes(args.shapes)[0], args.batch1_calls, args.warmup)
    chosen = args.cases.split(",") if args.cases else None
    if chosen and set(chosen) - set(case_names(args, 1)):
        parser.error(f"--cases: no case named {', '.join(sorted(set(chosen) - set(case_names(args, 1))))}; "
                     f"with these flags the cases are {', '.join(case_names(args, 1))}")

    import tensorflow as tf

    set_tf_threads(tf, args.threads, args.inter_op_threads)
    from albert_tf import AlbertClassifier, AlbertConfig

    print(f"cpu: {cpu_model()} [{cpu_flags()}], oneDNN {onednn_state()}, TF {tf.__version__}, "
          f"cores usable: {len(os.sched_getaffinity(0))}, threads: {args.threads or 'default'}, "
          f"TF inter-op threads: {args.inter_op_threads or 'default'}, "
          f"{'one process' if args.in_process else 'a fresh process per case and round'}, load before: {load_average()}")
    config = AlbertConfig.from_json_file(args.config)
    tf.keras.utils.set_random_seed(0)
    classifier = AlbertClassifier(config, num_labels=2)
    classifier({name: tf.constant(value) for name, value in ids_batch(1, 8, config.vocab_size).items()})
    workdir = tempfile.mkdtemp(prefix="bench_serving_")
    dtypes = {} if args.no_float32_exports else {"": "float32"}
    if args.bf16:
        dtypes["_bf16"] = "mixed_bfloat16"
    plan = {"config": os.path.abspath(args.config), "weights": os.path.join(workdir, "classifier.weights.h5"),
            "exports": write_exports(classifier, dtypes, args.export_kernels.split(","), workdir),
            "onnx": {}, "hf_dir": None, "tflite": {} if args.no_tflite else write_tflite(classifier, workdir),
            "threads": args.threads, "inter_op_threads": args.inter_op_threads,
            "ort_spinning": (args.ort_spinning if args.in_process else None)}
    classifier.save_weights(plan["weights"])
    if not args.no_onnx:
        plan["onnx"], plan["hf_dir"] = export_onnx(classifier, workdir, not args.no_int8)
    plan_file = os.path.join(workdir, "plan.json")
    with open(plan_file, "w") as f:
        json.dump(plan, f)

    results = {}
    for batch, seq in parse_shapes(args.shapes):
        names = [name for name in case_names(args, batch) if not chosen or name in chosen]
        if not names:
            print(f"batch {batch} x {seq}: none of --cases runs at this batch size")
            continue
        reference = in_process_model(plan["config"], plan["weights"])(
            {key: tf.constant(value) for key, value in ids_batch(batch, seq, config.vocab_size).items()}).numpy()
        calls = args.batch1_calls if batch == 1 else 1
        if args.in_process:
            cases = {name: case_function(plan, name, batch, seq) for name in names}
            logits = {name: case() for name, case in cases.items()}
            timed = {name: (lambda case=case: [case() for _ in range(calls)]) for name, case in cases.items()}
            wall, cpu = interleaved_medians(timed, args.rounds, warmup=args.warmup)
            wall, cpu = ({name: [seconds / calls for seconds in values] for name, values in times.items()}
                         for times in (wall, cpu))
            pids = {name: [os.getpid()] for name in names}
        else:
            wall, cpu, logits, pids = time_in_fresh_processes(plan_file, names, (batch, seq), args.rounds, calls,
                                                              args.warmup)
        differences = {name: float(np.abs(logits[name] - reference).max()) for name in names
                       if not name.endswith("_text")}
        for name, difference in differences.items():
            print(f"  {batch}x{seq} {name}: max |logits - in_process| = {difference:.2e}")
        print(f"batch {batch} x {seq} tokens, {args.rounds} rounds of {calls} call(s), load {load_average()}")
        base = median(wall["ort_fp32"]) if "ort_fp32" in wall else None
        results[f"{batch}x{seq}"] = {}
        for name in names:
            ratio = f"  ort_fp32 / this = {base / median(wall[name]):.2f}" if base else ""
            print(f"  {name:28s} wall {1000 * median(wall[name]):9.1f} ms  cpu {1000 * median(cpu[name]):9.1f} ms{ratio}")
            results[f"{batch}x{seq}"][name] = {"wall_ms": 1000 * median(wall[name]), "cpu_ms": 1000 * median(cpu[name]),
                                               "max_difference": differences.get(name), "pids": pids[name]}
    print(f"load after: {load_average()}")
    return results


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # results as they come, in a log too
    main()
