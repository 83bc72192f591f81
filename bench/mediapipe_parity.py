"""MediaPipe's `TextClassifier` on our `--export_tflite` files against our SavedModel's
`serving_default`, on a GLUE dev set's raw sentences (single-text tasks: SST-2, CoLA).

For float32 and dynamic-range int8: how many sentences MediaPipe labels otherwise than the
SavedModel, the largest probability difference (overall, and where the tokens agree), dev accuracy
of each; and every sentence whose token ids MediaPipe's preprocessing makes otherwise than our
tokenizer (read through a probe model whose output is its inputs), with both tokenizations.
Latencies are wall time per call, one raw sentence at a time, each runtime in its own process.

    python run_classifier.py --task_name=SST-2 --data_dir=$GLUE_DIR --do_train --do_eval \\
        --train_step=2000 --warmup_step=200 --learning_rate=5e-4 --max_seq_length=64 \\
        --save_checkpoints_steps=500 --output_dir=/tmp/sst2
    python run_classifier.py --task_name=SST-2 --data_dir=$GLUE_DIR --output_dir=/tmp/sst2 \\
        --max_seq_length=128 --export_dir=/tmp/sst2/export --export_version=1 --export_tflite=/tmp/sst2/tflite
    python bench/mediapipe_parity.py --saved_model=/tmp/sst2/export/1 --tflite_dir=/tmp/sst2/tflite \\
        --data_dir=$GLUE_DIR --json=bench/results/mediapipe_parity_sst2.json
"""

import argparse
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

from bench._common import cpu_model, load_average  # noqa: E402
from bench.mediapipe_tasks import probe_ids, token_probe  # noqa: E402

SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
QUANTIZATIONS = ("float32", "dynamic_int8")


def mediapipe(kind, model_path, texts, workdir):
    """`bench/mediapipe_tasks.py` in a process of its own."""
    texts_path, out_path = os.path.join(workdir, "texts.json"), os.path.join(workdir, "out.json")
    with open(texts_path, "w", encoding="utf-8") as handle:
        json.dump(texts, handle)
    subprocess.run([sys.executable, os.path.join(REPO, "bench", "mediapipe_tasks.py"), kind, model_path,
                    texts_path, out_path], check=True, env=dict(os.environ, GLOG_minloglevel="2"))
    with open(out_path, encoding="utf-8") as handle:
        return json.load(handle)


def saved_model_run(path, texts):
    """(probabilities of every text, seconds per call one text at a time)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  registers the SentencePiece ops of the graph

    serve = tf.saved_model.load(path).signatures["serving_default"]
    serve(sentence=tf.constant(texts[:1]))  # traced and warm
    start = time.perf_counter()
    probabilities = [serve(sentence=tf.constant([text]))["probabilities"].numpy()[0] for text in texts]
    return np.array(probabilities), (time.perf_counter() - start) / len(texts)


def input_length(model_path):
    from ai_edge_litert.interpreter import Interpreter

    return int(Interpreter(model_path=model_path).get_input_details()[0]["shape"][1])


def tokenization_differences(texts, seq_length, spm_model_file, workdir):
    """[(index, MediaPipe's pieces, ours)] for every text whose ids differ."""
    from albert_tf.text.tokenization import AlbertTokenizer

    probe = os.path.join(workdir, "probe.tflite")
    with open(probe, "wb") as handle:
        handle.write(token_probe(spm_model_file, seq_length))
    tokenizer = AlbertTokenizer(spm_model_file)
    differences = []
    for i, (text, row) in enumerate(zip(texts, mediapipe("embed", probe, texts, workdir)["outputs"])):
        theirs, segments = probe_ids(row)
        ours = [tokenizer.cls_id] + tokenizer.encode(text)[:seq_length - 2] + [tokenizer.sep_id]
        if theirs != ours or set(segments) != {0}:
            differences.append((i, tokenizer.convert_ids_to_tokens(theirs), tokenizer.convert_ids_to_tokens(ours)))
    return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saved_model", required=True, help="run_classifier.py's export version directory")
    parser.add_argument("--tflite_dir", required=True, help="run_classifier.py --export_tflite's directory")
    parser.add_argument("--data_dir", required=True, help="GLUE directory: <data_dir>/<TASK>/dev.tsv")
    parser.add_argument("--task_name", default="SST-2")
    parser.add_argument("--spm_model_file", default=SPM_MODEL)
    parser.add_argument("--json", help="write the record here")
    args = parser.parse_args()

    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.features import label_value
    from albert_tf.glue.tasks import get_task

    task = get_task(args.task_name)
    examples = read_examples(task, "dev", args.data_dir).examples
    texts = [example.text_a for example in examples]
    labels = np.array([label_value(task, example.label) for example in examples])
    paths = {q: os.path.join(args.tflite_dir, f"classifier_{q}.tflite") for q in QUANTIZATIONS}
    seq_length = input_length(paths["float32"])

    expected, saved_model_seconds = saved_model_run(args.saved_model, texts)
    with tempfile.TemporaryDirectory() as workdir:
        differences = tokenization_differences(texts, seq_length, args.spm_model_file, workdir)
        runs = {q: mediapipe("classify", path, texts, workdir) for q, path in paths.items()}
    same_tokens = np.ones(len(texts), bool)
    same_tokens[[i for i, _, _ in differences]] = False

    record = {
        "command": "python " + " ".join(sys.argv), "task": task.name, "sentences": len(texts),
        "seq_length": seq_length, "processor": cpu_model(), "load_average": load_average(),
        "saved_model": {"accuracy": float(np.mean(expected.argmax(1) == labels)),
                        "ms_per_call": 1000 * saved_model_seconds},
        "tokenization_differences": [{"index": i, "sentence": texts[i], "mediapipe": theirs, "ours": ours}
                                     for i, theirs, ours in differences],
    }
    for quantization, run in runs.items():
        scores = np.array(run["outputs"])
        difference = np.abs(scores - expected).max(1)
        record[quantization] = {
            "file_bytes": os.path.getsize(paths[quantization]),
            "accuracy": float(np.mean(scores.argmax(1) == labels)),
            "label_differences": int(np.sum(scores.argmax(1) != expected.argmax(1))),
            "max_score_difference": float(difference.max()),
            "max_score_difference_same_tokens": float(difference[same_tokens].max()),
            "load_ms": 1000 * run["load_seconds"], "ms_per_call": 1000 * run["seconds_per_call"],
        }
    print(json.dumps(record, indent=1, ensure_ascii=False))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1, ensure_ascii=False)
            handle.write("\n")


if __name__ == "__main__":
    main()
