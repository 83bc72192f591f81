"""Does pretraining transfer? GLUE dev scores fine-tuned from a checkpoint vs from random weights.

    python bench/transfer_glue.py --init_checkpoint=output/pretraining_cpu_gutenberg \\
        --albert_config_file=configs/albert_cpu_small.json --data_dir=$GLUE_DIR \\
        --output_dir=output/transfer --json=bench/results/transfer_glue.json

Each (task, start) pair is one `run_classifier.py --seeds=N` run with the same fine-tuning recipe
(below; `--init_checkpoint` is the only difference between the two starts), so this script holds
no training logic. A pair whose `seeds_summary.json` exists is not rerun if it was made with the
same run_classifier.py flags (kept beside it in `transfer_flags.json`); a run made otherwise is an
error (give a fresh `--output_dir`). Random-init runs do not depend on the checkpoint, so another
checkpoint can be compared against an earlier folder's with `--random_dir`. It prints a Markdown
table: mean ± standard deviation over the seeds of the best dev evaluation of each run, the
majority-class baseline, and whether pretrained beats random by more than two standard deviations
(the larger of the two starts' seed-to-seed spreads).
"""

import argparse
import json
import math
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# task -> (train_step, save_checkpoints_steps), at batch 32: sized for a 2-core CPU. SST-2 three
# epochs of its 67,349 rows, a dev evaluation every half epoch; CoLA, MRPC and STS-B ten epochs of
# 8,551, 3,668 and 5,749 rows, a dev evaluation after each epoch.
RECIPE = {"SST-2": (6315, 1053), "CoLA": (2680, 268), "MRPC": (1150, 115), "STS-B": (1800, 180)}
COMMON_FLAGS = ["--do_train", "--do_eval", "--train_batch_size=32",
                "--padding=bucketed", "--optimizer=adamw", "--keep_checkpoint_max=1"]
START_NAMES = ("pretrained", "random")
FLAGS_FILE = "transfer_flags.json"


def run_pair(task, start, args):
    """Runs (or reuses) one task from one start; returns its output directory."""
    base_dir = args.random_dir if start == "random" and args.random_dir else args.output_dir
    output_dir = os.path.join(base_dir, start_dir(start, args), task)
    train_step, every = RECIPE[task]
    command = [sys.executable, os.path.join(REPO_ROOT, "run_classifier.py"), f"--task_name={task}",
               f"--data_dir={args.data_dir}", f"--albert_config_file={args.albert_config_file}",
               f"--output_dir={output_dir}", f"--seeds={args.seeds}", f"--seed={args.seed}",
               f"--learning_rate={args.learning_rate}", f"--max_seq_length={args.max_seq_length}",
               f"--train_step={train_step}", f"--warmup_step={train_step // 10}", f"--save_checkpoints_steps={every}",
               f"--cached_dir={os.path.join(args.output_dir, 'features', task)}", *COMMON_FLAGS]
    if args.spm_model_file:  # both starts: the vocabulary the checkpoint was pretrained with
        command.append(f"--spm_model_file={args.spm_model_file}")
    if start == "pretrained":
        command.append(f"--init_checkpoint={args.init_checkpoint}")
        if args.reinit_pooler:
            command.append("--reinit_pooler")
    # What makes the run: every flag but the two folders, which follow from --output_dir.
    flags = [arg for arg in command[2:] if not arg.startswith(("--output_dir=", "--cached_dir="))]
    if os.path.exists(os.path.join(output_dir, "seeds_summary.json")):
        check_same_flags(output_dir, flags)
        return output_dir
    print("+", " ".join(command), flush=True)
    returncode = subprocess.run(command).returncode
    # Judged by its outputs: a run that wrote them counts even if its process was stopped after.
    if not os.path.exists(os.path.join(output_dir, "seeds_summary.json")):
        raise RuntimeError(f"{task} from {start}: run_classifier.py exited with {returncode} "
                           f"before writing {output_dir}/seeds_summary.json")
    with open(os.path.join(output_dir, FLAGS_FILE), "w") as handle:
        json.dump(flags, handle, indent=1)
    return output_dir


def check_same_flags(output_dir, flags):
    """A finished pair is reused only if the same flags made it: a run of another recipe, learning
    rate, length or checkpoint left in the same folder must not enter the table."""
    path = os.path.join(output_dir, FLAGS_FILE)
    if not os.path.exists(path):
        raise RuntimeError(f"{output_dir}: no {FLAGS_FILE} to tell which flags made this run; "
                           "give a fresh --output_dir")
    with open(path) as handle:
        made_with = json.load(handle)
    if made_with != flags:
        differ = [arg for arg in made_with if arg not in flags] + [arg for arg in flags if arg not in made_with]
        raise RuntimeError(f"{output_dir}: made with other flags ({' '.join(differ)}); give a fresh --output_dir")


def start_dir(start, args):
    """The start's folder: pretrained runs with a fresh pooler are kept apart from the others."""
    return "pretrained_reinit_pooler" if start == "pretrained" and args.reinit_pooler else start


def summarize(task, output_dir):
    """{metric: {mean, std}} over the seeds, and the majority baseline of the dev split."""
    with open(os.path.join(output_dir, "seeds_summary.json")) as handle:
        summary = json.load(handle)
    with open(os.path.join(output_dir, "eval_results.json")) as handle:
        baseline = {k[len("majority_baseline_"):]: v for k, v in json.load(handle).items()
                    if k.startswith("majority_baseline_")}
    runs = [run["metrics"] for run in summary["runs"]]
    metrics = {}
    for name in runs[0]:
        values = [run[name] for run in runs]
        mean = sum(values) / len(values)
        std = (sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)) ** 0.5
        metrics[name] = {"mean": mean, "std": std, "values": values}
    return {"metrics": metrics, "majority_baseline": baseline, "runs": len(runs)}


def compare(results, task, metric):
    """(pretrained better by more than 2 std?, the margin in std) for one metric; for "mse" lower
    is better, so the margin is random - pretrained."""
    pre, rand = (results[start][task]["metrics"][metric] for start in START_NAMES)
    margin = (rand["mean"] - pre["mean"]) if metric == "mse" else (pre["mean"] - rand["mean"])
    spread = max(pre["std"], rand["std"])
    ratio = margin / spread if spread else (0.0 if margin == 0 else math.copysign(math.inf, margin))
    return margin > 2 * spread, ratio


def markdown(results, selection):
    lines = ["| task | metric | pretrained | random init | majority | pretrained - random (in std) | > 2 std |",
             "|---|---|---|---|---|---|---|"]
    for task in results["pretrained"]:
        for metric in results["pretrained"][task]["metrics"]:
            cells = [f"{results[s][task]['metrics'][metric]['mean']:.4f} ± {results[s][task]['metrics'][metric]['std']:.4f}"
                     for s in START_NAMES]
            majority = results["pretrained"][task]["majority_baseline"].get(metric)
            wins, ratio = compare(results, task, metric)
            mark = ("**yes**" if wins else "no") + (" (selection)" if metric == selection[task] else "")
            lines.append(f"| {task} | {metric} | {cells[0]} | {cells[1]} | "
                         f"{'' if majority is None else f'{majority:.4f}'} | {ratio:+.1f} | {mark} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--init_checkpoint", required=True, help="run_pretraining.py output directory (or checkpoint)")
    parser.add_argument("--albert_config_file", required=True)
    parser.add_argument("--data_dir", required=True, help="GLUE directory: <data_dir>/<TASK>/{train,dev}.tsv")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--tasks", default=",".join(RECIPE), help="comma list of " + ", ".join(RECIPE))
    parser.add_argument("--starts", default=",".join(START_NAMES), help="comma list of pretrained, random")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--spm_model_file", help="SentencePiece model of the checkpoint's vocabulary, for both "
                        "starts (default: run_classifier.py's, the official 30k-clean)")
    parser.add_argument("--max_seq_length", type=int, default=64,
                        help="the pretraining length; positions beyond it were never trained")
    parser.add_argument("--random_dir", help="take (or make) the random-init runs under this earlier "
                        "--output_dir instead: they do not depend on --init_checkpoint")
    parser.add_argument("--reinit_pooler", action="store_true",
                        help="pretrained start: re-initialise the pooler after loading (run_classifier.py --reinit_pooler)")
    parser.add_argument("--json", help="also write the summaries here")
    args = parser.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    starts = [s.strip() for s in args.starts.split(",") if s.strip()]
    unknown = sorted(set(tasks) - set(RECIPE)) + sorted(set(starts) - set(START_NAMES))
    if unknown:
        parser.error(f"unknown --tasks/--starts value(s): {', '.join(unknown)}")
    try:
        results = {start: {task: summarize(task, run_pair(task, start, args)) for task in tasks} for start in starts}
    except (OSError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"recipe": {"tasks": RECIPE, "flags": COMMON_FLAGS, "learning_rate": args.learning_rate,
                                  "max_seq_length": args.max_seq_length,
                                  "spm_model_file": args.spm_model_file and os.path.basename(args.spm_model_file),
                                  "seeds": args.seeds, "first_seed": args.seed,
                                  "reinit_pooler": args.reinit_pooler},
                       "results": results}, handle, indent=1, sort_keys=True)
    if set(starts) == set(START_NAMES):
        from albert_tf.glue.tasks import get_task  # pylint: disable=g-import-not-at-top

        print(markdown(results, {task: get_task(task).selection_metric for task in tasks}))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, REPO_ROOT)
    sys.exit(main())
