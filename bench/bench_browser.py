"""The classifier in the browser beside MediaPipe Python and our SavedModel: load time and per-call
latency of one classifier on the same sentences, one sentence per call.

One `AlbertClassifier` (random weights: latency does not depend on them; 2 labels) is exported three
ways: the SavedModel (`export_classifier`, its `serving_default` on raw text), and MediaPipe
`.tflite` files with metadata (`mediapipe_classifier`, float32 and dynamic-range int8, static
[1, seq_length] inputs). Cases:

- `browser_<form>`: web/index.html in headless Chromium (Debian's package, driven by puppeteer-core),
  MediaPipe Tasks for the web (WebAssembly, XNNPACK on the CPU): the page's own measures, the time
  from opening the page until it can classify (`load`), and each `classify()` call (`call`);
- `mediapipe_python_<form>`: `mediapipe.tasks.python.text.TextClassifier` (bench/mediapipe_tasks.py,
  in a process of its own; `load` is the task's creation, the import of mediapipe before it);
- `saved_model`: `tf.saved_model.load` and its `serving_default` on one sentence.

Every round opens the page in a fresh browser and loads every model anew; a round times `--calls`
calls per sentence after one untimed call (the first call sets up XNNPACK: it is reported apart as
`first_call`). The table gives medians: of each round's median call, then over `--rounds`. The
MediaPipe models always compute `--seq_length` tokens (their static input shape); the SavedModel
only the sentence's own (it pads a batch to its longest row).

    python bench/bench_browser.py                       # albert-base, 128 tokens: docs/on_device.md
    python bench/bench_browser.py --config configs/albert_tiny.json --rounds 1 --calls 3

Needs chromium and web/'s npm packages: `bash web/install_browser.sh`.
"""

import argparse
import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from albert_tf.choices import TFLITE_QUANTIZATIONS as FORMS  # noqa: E402
from bench._common import cpu_flags, cpu_model, load_average, median  # noqa: E402

WEB_DIR = os.path.join(REPO, "web")
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
SENTENCES = [
    "A gorgeous, witty, seductive movie.",
    "The plot is nothing but boilerplate clichés from start to finish.",
    "it's a charming and often affecting journey.",
    "Unfolds with the sluggish pace and lack of urgency of a bad soap opera.",
    "The performances are uniformly excellent, and the 2,000-mile road trip never drags.",
]


def _web_server():
    spec = importlib.util.spec_from_file_location("web_serve", os.path.join(WEB_DIR, "serve.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page_results(model_path, sentences, calls=1):
    """Serves web/ with `model_path` on loopback and runs web/run_page.mjs on it: the page's load
    times and, per sentence, its unrounded scores, label names, text as its table shows it and the
    latency of each call."""
    with _web_server().serving(model_path) as url:
        return page_results_at(url, sentences, calls)


def page_results_at(url, sentences, calls=1):
    """`page_results` of the page served at `url`."""
    with tempfile.TemporaryDirectory() as tmp:
        sentences_file = os.path.join(tmp, "sentences.json")
        with open(sentences_file, "w", encoding="utf-8") as handle:
            json.dump(sentences, handle)
        command = ["node", os.path.join(WEB_DIR, "run_page.mjs"), "--url", url, "--sentences", sentences_file,
                   "--calls", str(calls)]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if finished.returncode != 0:
        last_line = (finished.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"web/run_page.mjs failed ({finished.returncode}): {last_line}")
    return json.loads(finished.stdout)


def mediapipe_python_results(model_path, sentences, calls=1):
    """MediaPipe Python's `TextClassifier` on `model_path` (bench/mediapipe_tasks.py, in a process of
    its own), each sentence `calls` times in a row: load time, and per sentence the scores in label
    order and the latency of each call, as `page_results` gives them."""
    with tempfile.TemporaryDirectory() as tmp:
        texts_file, out_file = os.path.join(tmp, "texts.json"), os.path.join(tmp, "out.json")
        with open(texts_file, "w", encoding="utf-8") as handle:
            json.dump([text for text in sentences for _ in range(calls)], handle)
        subprocess.run([sys.executable, os.path.join(REPO, "bench", "mediapipe_tasks.py"), "classify", model_path,
                        texts_file, out_file], check=True, env=dict(os.environ, GLOG_minloglevel="2"))
        with open(out_file, encoding="utf-8") as handle:
            measured = json.load(handle)
    results = [{"text": text, "scores": measured["outputs"][i * calls],
                "latencies_ms": [1000 * s for s in measured["call_seconds"][i * calls:(i + 1) * calls]]}
               for i, text in enumerate(sentences)]
    return {"load_ms": 1000 * measured["load_seconds"], "results": results}


def saved_model_results(version_dir, sentences, calls=1):
    """The SavedModel's `serving_default` on one sentence per call: load time, probabilities, latencies."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  registers the SentencePiece ops of the graph

    started = time.perf_counter()
    serve = tf.saved_model.load(version_dir).signatures["serving_default"]
    load_ms = 1000 * (time.perf_counter() - started)
    results = []
    for text in sentences:
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            probabilities = serve(sentence=tf.constant([text]))["probabilities"].numpy()
            latencies.append(1000 * (time.perf_counter() - started))
        results.append({"text": text, "scores": probabilities[0].tolist(), "latencies_ms": latencies})
    return {"load_ms": load_ms, "results": results}


def export_models(config_path, seq_length, export_dir):
    """The SavedModel version directory and the MediaPipe `.tflite` of each of FORMS, of one random
    SST-2 classifier; returns {"saved_model": dir, form: path}."""
    import tensorflow as tf

    from albert_tf import AlbertClassifier, AlbertConfig
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier
    from albert_tf.serving.litert.publish import export_tflite

    tf.keras.utils.set_random_seed(0)
    task = get_task("sst-2")
    classifier = AlbertClassifier(AlbertConfig.from_json_file(config_path), num_labels=len(task.labels))
    paths = dict(zip(FORMS, export_tflite(classifier, os.path.join(export_dir, "tflite"), SPM_MODEL, task.labels,
                                          seq_length, FORMS)))
    paths["saved_model"] = export_classifier(classifier, task, SPM_MODEL, os.path.join(export_dir, "saved_model"),
                                             max_seq_length=seq_length)
    return paths


def _timed_calls(results):
    """The median over sentences and calls, all calls after each sentence's untimed first."""
    return median([latency for result in results for latency in result["latencies_ms"][1:]])


def one_round(paths, sentences, calls):
    """{case: {"load_ms", "call_ms", "first_call_ms"}} of every case, each loading its model anew."""
    round_results = {}
    runs = {f"browser_{form}": functools.partial(page_results, paths[form]) for form in FORMS}
    runs.update({f"mediapipe_python_{form}": functools.partial(mediapipe_python_results, paths[form]) for form in FORMS})
    runs["saved_model"] = functools.partial(saved_model_results, paths["saved_model"])
    for case, run in runs.items():
        measured = run(sentences, calls + 1)
        round_results[case] = {"load_ms": measured.get("load_ms", measured.get("ready_ms")),
                               "call_ms": _timed_calls(measured["results"]),
                               "first_call_ms": measured["results"][0]["latencies_ms"][0]}
        if case.startswith("browser"):
            round_results[case]["chromium"] = measured["chromium"]
    return round_results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "albert_base.json"))
    parser.add_argument("--seq_length", type=int, default=128, help="the MediaPipe models' sequence length")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3, help="timed calls per sentence and round")
    parser.add_argument("--output_json", help="also write the medians and every round here")
    args = parser.parse_args(argv)

    load_before = load_average()
    print(f"cpu: {cpu_model()} [{cpu_flags()}], {os.cpu_count()} cpus, load before: {load_before}")
    with tempfile.TemporaryDirectory() as export_dir:
        paths = export_models(args.config, args.seq_length, export_dir)
        sizes = {form: os.path.getsize(paths[form]) for form in FORMS}
        rounds = [one_round(paths, SENTENCES, args.calls) for _ in range(args.rounds)]
    medians = {case: {key: median([one[case][key] for one in rounds]) for key in ("load_ms", "call_ms", "first_call_ms")}
               for case in rounds[0]}
    print(f"{os.path.basename(args.config)}, {args.seq_length} tokens, {len(SENTENCES)} sentences x {args.calls} "
          f"calls, {args.rounds} rounds; {rounds[0]['browser_float32']['chromium']}; "
          f".tflite bytes {sizes}; load after: {load_average()}")
    print(f"{'case':<26}{'load ms':>10}{'first call ms':>15}{'call ms':>10}")
    for case, values in medians.items():
        print(f"{case:<26}{values['load_ms']:>10.0f}{values['first_call_ms']:>15.1f}{values['call_ms']:>10.2f}")
    record = {"cpu": cpu_model(), "cpus": os.cpu_count(), "load_before": load_before, "load_after": load_average(),
              "config": os.path.basename(args.config), "seq_length": args.seq_length,
              "calls": args.calls, "sentences": SENTENCES, "tflite_bytes": sizes, "medians": medians, "rounds": rounds}
    if args.output_json:
        with open(args.output_json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
    return record


if __name__ == "__main__":
    main()
