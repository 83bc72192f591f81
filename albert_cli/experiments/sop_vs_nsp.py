"""Paper Table 5: pretraining with sentence-order (SOP) pairs against next-sentence (NSP) pairs.

Both models see the same corpus, budget and seed; only the sentence pairs differ (NSP data is
`--random_next_sentence`). Each is evaluated on held-out MLM, on held-out NSP pairs and on
held-out SOP pairs (the same head, scored against each file's labels), then fine-tuned on a
two-sentence GLUE task. The paper (ALBERT-base): the NSP model solves SOP at chance (52.0%), the
SOP model solves NSP reasonably (78.9%), and SOP helps the multi-sentence tasks.
"""

from albert_cli.experiments import report
from albert_cli.experiments.data import SENTENCE_TASKS, pretraining_files
from albert_cli.experiments.finetune import majority_dev_accuracy
from albert_cli.experiments.pretrain import majority_accuracy
from albert_cli.experiments.variants import train_and_score

TITLE = "Sentence-order vs next-sentence prediction (paper Table 5)"
DEFAULTS = {}
# ALBERT-base: held-out MLM, NSP and SOP accuracy (%), average of the five downstream tasks.
PAPER = {"nsp": {"mlm": "54.5", "nsp": "90.5", "sop": "52.0", "average": "79.2"},
         "sop": {"mlm": "54.0", "nsp": "78.9", "sop": "86.5", "average": "80.1"}}


def run(setup, log=print):
    files = {task: pretraining_files(setup, task) for task in SENTENCE_TASKS}
    heldout = {f"heldout_{task}": files[task][1] for task in SENTENCE_TASKS}
    rows = []
    for task in SENTENCE_TASKS:
        row, _ = train_and_score(setup, task, setup.base_config(), files[task][0], heldout, log=log)
        row.update(
            mlm_accuracy=row["heldout_sop_masked_lm_accuracy"],
            nsp_accuracy=row["heldout_nsp_sentence_order_accuracy"],
            sop_accuracy=row["heldout_sop_sentence_order_accuracy"],
            dev_score=row[f"{setup.finetune_task}_dev_accuracy"],
            **{f"paper_{key}": value for key, value in PAPER[task].items()},
        )
        rows.append(row)
    majority = {task: majority_accuracy(files[task][1], setup) for task in SENTENCE_TASKS}
    rows.append({"variant": "always the commoner label", "nsp_accuracy": majority["nsp"],
                 "sop_accuracy": majority["sop"], "dev_score": majority_dev_accuracy(setup)})
    results = {"experiment": "sop_vs_nsp", "setup": vars(setup), "finetune_task": setup.finetune_task,
               "variants": rows, "majority_accuracy": majority}
    return write(setup, results)


def write(setup, results):
    rows = results["variants"]
    trained = [row for row in rows if "mlm_accuracy" in row]
    columns = [("variant", "pretrained with"), ("mlm_accuracy", "held-out MLM"), ("nsp_accuracy", "held-out NSP"),
               ("sop_accuracy", "held-out SOP"), ("dev_score", f"{setup.finetune_task} dev acc"),
               ("paper_mlm", "paper MLM"), ("paper_nsp", "paper NSP"), ("paper_sop", "paper SOP"),
               ("paper_average", "paper avg")]
    figure, (axes,) = report.new_figure(1)
    metrics = ("mlm_accuracy", "nsp_accuracy", "sop_accuracy", "dev_score")
    width = 0.8 / len(trained)
    for index, row in enumerate(trained):
        axes.bar([position + index * width for position in range(len(metrics))],
                 [row[metric] for metric in metrics], width, label=f"pretrained with {row['variant'].upper()}")
    for position, task in ((1, "nsp"), (2, "sop")):
        level = results["majority_accuracy"][task]
        axes.hlines(level, position - width / 2, position + width * (len(trained) - 0.5), color="grey", linestyle=":", linewidth=1.5)
    axes.set_xticks([position + width * (len(trained) - 1) / 2 for position in range(len(metrics))],
                    ["held-out MLM", "held-out NSP", "held-out SOP", f"{setup.finetune_task} dev"])
    axes.set(ylabel="accuracy", ylim=(0, 1))
    axes.legend()
    notes = ("Dotted (figure) and last row (table): the accuracy of always answering the commoner "
             "label, the real chance level of each held-out file.\n")
    report.write_outputs(setup.output_dir, TITLE, results, report.markdown_table(columns, rows), figure, notes)
    return results
