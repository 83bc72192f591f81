"""The shared shape of the sharing and embedding-size experiments: several configs, one budget,
held-out MLM and sentence order, a downstream task, parameter counts; one table and one figure."""

from albert_cli.experiments import paper, report
from albert_cli.experiments.data import pretraining_files
from albert_cli.experiments.finetune import dev_examples, majority_dev_accuracy
from albert_cli.experiments.pretrain import heldout_counts, majority_accuracy
from albert_cli.experiments.variants import train_and_score

COLUMNS = [("variant", "variant"), ("parameters", "parameters"), ("paper_parameters", "paper parameters"),
           ("heldout_masked_lm_accuracy", "held-out MLM acc"), ("heldout_sentence_order_accuracy", "held-out SOP acc"),
           ("dev_score", "downstream dev acc"), ("paper_average", "paper avg")]


def run_variants(setup, experiment, variants, paper_table, log):
    """Trains and scores `variants` ({name: config}); `paper_table` ({name: (parameters, average)})
    gives the paper's numbers printed beside each."""
    train_file, heldout_file = pretraining_files(setup)
    rows = []
    for name, config in variants.items():
        row, _ = train_and_score(setup, name, config, train_file, {"heldout": heldout_file}, log=log)
        row["dev_score"] = row[f"{setup.finetune_task}_dev_accuracy"]
        if name in paper_table:  # (our E=16 of a tiny test, say, has no paper row)
            parameters, average = paper_table[name]
            row["paper_parameters"], row["paper_average"] = paper.shown(parameters), paper.shown(average)
        rows.append(row)
    return {"experiment": experiment, "setup": vars(setup), "finetune_task": setup.finetune_task, "variants": rows,
            "finetune_majority_accuracy": majority_dev_accuracy(setup),
            "heldout_sop_majority_accuracy": majority_accuracy(heldout_file, setup),
            "counts": dict(heldout_counts(heldout_file, setup), dev_examples=dev_examples(setup))}


def draw(runs):
    """The figure of one or more seeds' results (the first is the table's): held-out MLM and SOP
    accuracy and the downstream dev accuracy of every variant."""
    task = runs[0]["finetune_task"]
    return report.accuracy_figure(runs, [
        report.Panel("heldout_masked_lm_accuracy", "held-out MLM accuracy", "masked_lm_predictions"),
        report.Panel("heldout_sentence_order_accuracy", "held-out SOP accuracy", "sentence_pairs",
                     lambda results: results.get("heldout_sop_majority_accuracy")),
        report.Panel("dev_score", f"{task} dev accuracy", "dev_examples",
                     lambda results: results.get("finetune_majority_accuracy")),
    ])[0]


def write(setup, title, results, notes=""):
    rows = results["variants"]
    notes += (f"{setup.finetune_task} dev accuracy of always answering the commoner class: "
              f"{results['finetune_majority_accuracy']:.4f}.\n")
    report.write_outputs(setup.output_dir, title, results, report.markdown_table(COLUMNS, rows), draw([results]), notes)
    return results
