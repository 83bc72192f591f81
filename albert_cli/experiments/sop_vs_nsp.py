"""Paper Table 5: pretraining with sentence-order (SOP) pairs, next-sentence (NSP) pairs, or MLM only.

The three models see the same corpus, budget and seed; the SOP and NSP models differ only in
their sentence pairs (NSP data is `--random_next_sentence`), and the MLM-only model ("None") trains
on the SOP data with the sentence loss taken out (`mlm_only`). Each is evaluated on held-out MLM,
on held-out NSP pairs and on held-out SOP pairs (the same head, scored against each file's
labels), then fine-tuned on a two-sentence GLUE task. The paper (ALBERT-base; `paper.SENTENCE_LOSS`):
the NSP model solves SOP at about chance, the SOP model solves NSP reasonably, and SOP helps the
multi-sentence tasks.
"""

from albert_cli.experiments import paper, report
from albert_cli.experiments.data import SENTENCE_TASKS, pretraining_files
from albert_cli.experiments.finetune import dev_examples, majority_dev_accuracy
from albert_cli.experiments.mlm_only import MlmOnlyTrainer
from albert_cli.experiments.pretrain import heldout_counts, majority_accuracy
from albert_cli.experiments.variants import train_and_score
from albert_tf.pretraining.trainer import PretrainingTrainer

TITLE = "Sentence-pair loss: none, next-sentence (NSP) or sentence-order (SOP) (paper Table 5)"
DEFAULTS = {}
# Variant: (the sentence pairs it trains on, its trainer), in the paper's order.
VARIANTS = {"none": ("sop", MlmOnlyTrainer), "nsp": ("nsp", PretrainingTrainer), "sop": ("sop", PretrainingTrainer)}
LEGEND = {"none": "MLM only", "nsp": "MLM + NSP", "sop": "MLM + SOP"}


def run(setup, log=print):
    files = {task: pretraining_files(setup, task) for task in SENTENCE_TASKS}
    heldout = {f"heldout_{task}": files[task][1] for task in SENTENCE_TASKS}
    rows = []
    for name, (task, trainer_class) in VARIANTS.items():
        row, _ = train_and_score(setup, name, setup.base_config(), files[task][0], heldout, log=log,
                                 trainer_class=trainer_class)
        row.update(
            mlm_accuracy=row["heldout_sop_masked_lm_accuracy"],
            nsp_accuracy=row["heldout_nsp_sentence_order_accuracy"],
            sop_accuracy=row["heldout_sop_sentence_order_accuracy"],
            dev_score=row[f"{setup.finetune_task}_dev_accuracy"],
            **{f"paper_{key}": paper.shown(value) for key, value in paper.SENTENCE_LOSS[name].items()},
        )
        rows.append(row)
    majority = {task: majority_accuracy(files[task][1], setup) for task in SENTENCE_TASKS}
    majority["dev"] = majority_dev_accuracy(setup)
    rows.append({"variant": "always the commoner label", "nsp_accuracy": majority["nsp"],
                 "sop_accuracy": majority["sop"], "dev_score": majority["dev"]})
    results = {"experiment": "sop_vs_nsp", "setup": vars(setup), "finetune_task": setup.finetune_task,
               "variants": rows, "majority_accuracy": majority,
               "counts": dict(heldout_counts(files["sop"][1], setup), dev_examples=dev_examples(setup))}
    return write(setup, results)


def _trained(results):
    """The trained models' rows, named as the figure names them."""
    return [dict(row, variant=LEGEND[row["variant"]]) for row in results["variants"] if row["variant"] in LEGEND]


def _majority(task):
    return lambda results: results.get("majority_accuracy", {}).get(task)


def draw(runs):
    """The figure of one or more seeds' results (the first is the table's): each model's held-out
    MLM, NSP and SOP accuracy and its downstream dev accuracy."""
    task = runs[0]["finetune_task"]
    return report.accuracy_figure(runs, [
        report.Panel("mlm_accuracy", "held-out MLM accuracy", "masked_lm_predictions"),
        report.Panel("nsp_accuracy", "held-out NSP accuracy", "sentence_pairs", _majority("nsp")),
        report.Panel("sop_accuracy", "held-out SOP accuracy", "sentence_pairs", _majority("sop")),
        report.Panel("dev_score", f"{task} dev accuracy", "dev_examples", _majority("dev")),
    ], rows_of=_trained)[0]


def write(setup, results):
    rows = results["variants"]
    columns = [("variant", "pretrained with"), ("mlm_accuracy", "held-out MLM"), ("nsp_accuracy", "held-out NSP"),
               ("sop_accuracy", "held-out SOP"), ("dev_score", f"{setup.finetune_task} dev acc"),
               ("paper_mlm", "paper MLM"), ("paper_nsp", "paper NSP"), ("paper_sop", "paper SOP"),
               ("paper_average", "paper avg")]
    notes = ("Last row (table) and dotted lines (figure): the accuracy of always answering the commoner "
             "label, the real chance level of each held-out file.\n")
    report.write_outputs(setup.output_dir, TITLE, results, report.markdown_table(columns, rows), draw([results]), notes)
    return results
