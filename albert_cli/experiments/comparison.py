"""The shared shape of the sharing and embedding-size experiments: several configs, one budget,
held-out MLM and sentence order, a downstream task, parameter counts; one table and one figure."""

from albert_cli.experiments import paper, report
from albert_cli.experiments.data import pretraining_files
from albert_cli.experiments.finetune import majority_dev_accuracy
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
            "finetune_majority_accuracy": majority_dev_accuracy(setup)}


def write(setup, title, results, notes=""):
    rows = results["variants"]
    figure, (mlm_axes, dev_axes) = report.new_figure(2)
    for axes, key, label in ((mlm_axes, "heldout_masked_lm_accuracy", "held-out MLM accuracy"),
                             (dev_axes, "dev_score", f"{setup.finetune_task} dev accuracy")):
        axes.scatter([row["parameters"] / 1e6 for row in rows], [row[key] for row in rows])
        for row in rows:
            axes.annotate(row["variant"], (row["parameters"] / 1e6, row[key]), fontsize=8)
        axes.set(xlabel="parameters (millions)", ylabel=label)
    notes += (f"{setup.finetune_task} dev accuracy of always answering the commoner class: "
              f"{results['finetune_majority_accuracy']:.4f}.\n")
    report.write_outputs(setup.output_dir, title, results, report.markdown_table(COLUMNS, rows), figure, notes)
    return results
