"""The TFLite Task Library's `BertQuestionAnswerer` on our `run_squad.py --export_tflite` files
against `run_squad.py`'s own predictions, on a SQuAD 2.0 dev file's raw text.

For float32 and dynamic-range int8: on answerable questions whose context fits one 384-token
window, how often the Task Library's best answer equals run_squad's (both after the official
answer normalization); exact match / F1 against gold on the answerable questions for both; how
many unanswerable questions the Task Library answers (it has no null answer); how many contexts
it truncates (tokenized with the SentencePiece model inside the `.tflite` files, the one the Task
Library uses); file sizes; wall time per `answer` call (one question at a time, in the Task
Library's own process). Every disagreement is listed with both answers. Bad input is one line,
exit status 2, found before the Task Library runs; `--json` appears only whole.

    python run_squad.py --do_train --do_predict --train_file=train-v1.json --predict_file=dev-v1.json \\
        --output_dir=/tmp/squad1 --export_tflite=/tmp/squad1/tflite ...
    bash bench/install_task_library.sh
    python bench/task_library_squad.py --squad_file=data/squad/dev-v2.0-sample.json \\
        --predictions=/tmp/squad1/predictions.json --tflite_dir=/tmp/squad1/tflite \\
        --json=bench/results/task_library_squad.json
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from albert_tf.io_utils import atomic_open  # noqa: E402
from albert_tf.squad.evaluation import compute_exact, compute_f1, normalize_answer  # noqa: E402
from bench._common import cpu_model, load_average  # noqa: E402
from bench.task_library_reference import task_library_inputs  # noqa: E402
from bench.task_library_squad_inputs import (BadInput, check_output, read_predictions, read_questions,  # noqa: E402
                                             tflite_tokenizer)

QUANTIZATIONS = ("float32", "dynamic_int8")
VENV_PYTHON = os.path.join(REPO, ".venv-tflite-support", "bin", "python")
INSTALL_HINT = "run `bash bench/install_task_library.sh`"


def _last_line(stderr):
    """The last line said, without its `error: ` (it is reported inside another)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("error: ") if lines else "no message"


def check_task_library_environment():
    """The Task Library's Python imports tflite-support: an environment half made (an install
    stopped midway) is named here, not in a traceback after the work."""
    if not os.path.exists(VENV_PYTHON):
        raise BadInput(f"{VENV_PYTHON}: the Task Library's environment is missing; {INSTALL_HINT}")
    try:
        result = subprocess.run([VENV_PYTHON, "-c", "import tflite_support.task.text"], capture_output=True,
                                text=True)
        reason = _last_line(result.stderr) if result.returncode else None
    except OSError as error:
        reason = error.strerror or str(error)
    if reason:
        raise BadInput(f"{VENV_PYTHON} cannot import tflite_support.task.text ({reason}): the Task Library's "
                       f"environment is broken; {INSTALL_HINT}")


def _shown_path(path):
    """`path` relative to the checkout when inside it, else its file name: records name no machine's paths."""
    relative = os.path.relpath(os.path.abspath(path), REPO)
    return os.path.basename(path) if relative.startswith(os.pardir) else relative


def task_library(model_path, questions, workdir):
    """bench/task_library_qa.py's output for `questions` in the Task Library's environment."""
    questions_path = os.path.join(workdir, "questions.json")
    answers_path = os.path.join(workdir, "answers.json")
    with open(questions_path, "w", encoding="utf-8") as handle:
        json.dump([{"context": q["context"], "question": q["question"]} for q in questions], handle)
    result = subprocess.run([VENV_PYTHON, os.path.join(REPO, "bench", "task_library_qa.py"), model_path,
                             questions_path, answers_path], capture_output=True, text=True)
    if result.returncode:  # its bad-input line (exit 2) or the last line of what went wrong
        raise BadInput(f"bench/task_library_qa.py on {model_path} failed (exit status {result.returncode}): "
                       f"{_last_line(result.stderr)}", status=2 if result.returncode == 2 else 1)
    with open(answers_path, encoding="utf-8") as handle:
        return json.load(handle)


def difference_kind(task_library_text, run_squad_text):
    """"whole_words": the Task Library's answer is run_squad's widened to the space-separated words
    around it (run_squad's may start or end inside a word); "other_span": another span ranked first."""
    start = task_library_text.find(run_squad_text) if run_squad_text else -1
    widened_by = task_library_text[:start] + task_library_text[start + len(run_squad_text):]
    if start >= 0 and not any(character.isspace() for character in widened_by):
        return "whole_words"
    return "other_span"


def compare(questions, truncated, best_texts, predictions):
    """The agreement and gold metrics of the Task Library's best answers against run_squad's."""
    answerable = [i for i, q in enumerate(questions) if not q["is_impossible"]]
    one_window = [i for i in answerable if not truncated[i]]
    disagreements = [{"id": questions[i]["id"], "question": questions[i]["question"],
                      "task_library": best_texts[i], "run_squad": predictions[questions[i]["id"]],
                      "kind": difference_kind(best_texts[i], predictions[questions[i]["id"]]),
                      "gold": questions[i]["answers"]}
                     for i in one_window
                     if normalize_answer(best_texts[i]) != normalize_answer(predictions[questions[i]["id"]])]

    def gold_metrics(texts):
        return {"exact_match": 100 * statistics.mean(max(compute_exact(g, texts[i]) for g in questions[i]["answers"])
                                                     for i in answerable),
                "f1": 100 * statistics.mean(max(compute_f1(g, texts[i]) for g in questions[i]["answers"])
                                            for i in answerable)}

    return {"answerable_one_window": len(one_window), "same_best_answer": len(one_window) - len(disagreements),
            "task_library_gold": gold_metrics(best_texts),
            "run_squad_gold": gold_metrics({i: predictions[questions[i]["id"]] for i in answerable}),
            "unanswerable_given_a_span": sum(1 for i, q in enumerate(questions)
                                             if q["is_impossible"] and best_texts[i]),
            "disagreements": disagreements}


def measure(args, questions, predictions, paths, tokenizer):
    """The comparison of both forms, as the JSON record holds it."""
    truncated = [task_library_inputs(q["context"], q["question"], tokenizer.encode, tokenizer.cls_id,
                                     tokenizer.sep_id)[3] for q in questions]
    contexts = {q["context"]: cut for q, cut in zip(questions, truncated)}
    result = {"processor": cpu_model(), "load_average_before": load_average(), "squad_file": _shown_path(args.squad_file),
              "questions": len(questions), "answerable": sum(not q["is_impossible"] for q in questions),
              "contexts": len(contexts), "contexts_truncated": sum(contexts.values()), "forms": {}}
    for quantization, path in paths.items():
        with tempfile.TemporaryDirectory() as workdir:
            output = task_library(path, questions, workdir)
        best_texts = [answers[0]["text"] if answers else "" for answers in output["answers"]]
        seconds = output["seconds"][1:] or output["seconds"]  # the first call warms up (unless it is the only one)
        result["forms"][quantization] = dict(
            compare(questions, truncated, best_texts, predictions), file_bytes=os.path.getsize(path),
            median_ms_per_question=1000 * statistics.median(seconds), mean_ms_per_question=1000 * statistics.mean(seconds))
    result["load_average_after"] = load_average()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad_file", default=os.path.join(REPO, "data", "squad", "dev-v2.0-sample.json"))
    parser.add_argument("--predictions", required=True, help="run_squad.py's predictions.json on its answerable "
                        "questions")
    parser.add_argument("--tflite_dir", required=True, help="run_squad.py --export_tflite's directory (the "
                        "tokenizer is the SentencePiece model inside its files)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    paths = {q: os.path.join(args.tflite_dir, f"question_answerer_{q}.tflite") for q in QUANTIZATIONS}
    try:  # every input checked before the Task Library runs
        if args.json:
            check_output(args.json, [("--squad_file", args.squad_file), ("--predictions", args.predictions),
                                     *(("--tflite_dir", path) for path in paths.values())])
        questions = read_questions(args.squad_file)
        predictions = read_predictions(args.predictions, questions)
        tokenizer = tflite_tokenizer(paths.values())
        check_task_library_environment()
        result = measure(args, questions, predictions, paths, tokenizer)
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return error.status
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        with atomic_open(args.json) as handle:
            handle.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
