"""Fine-tunes, evaluates and exports ALBERT on a GLUE task (TF2 port of the original's run_classifier.py),
or on one's own CSV, TSV or JSON Lines files (--train_file, --dev_file, --test_file and their columns).

    albert-classify --task_name=SST-2 --do_train --do_eval --train_step=300 \\
        --output_dir=output/glue/SST-2 --export_dir=output/glue/SST-2/export
    albert-classify --train_file=reviews.csv --text_column=review --label_column=sentiment \\
        --do_train --do_eval --output_dir=output/reviews --export_dir=output/reviews/export

(`python run_classifier.py ...` in a checkout). Defaults point at the bundled data (data/glue,
the official SentencePiece model, the tiny config). Evaluation runs every --save_checkpoints_steps
during training and keeps the best checkpoint by the task's metric (<output_dir>/best);
--seeds=N repeats training with N seeds and reports mean, standard deviation and best.
"""

import dataclasses
import json
import os

from albert_cli.cli import prefer_onednn
from albert_cli.tensorflow_logs import quiet_tensorflow

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

from absl import flags, logging

from albert_cli.bundled import GLUE_SAMPLES
from albert_cli import export_flags, task_flags
from albert_tf.choices import PADDING_MODES, TABLE_FILE_FORMATS, TFLITE_QUANTIZATIONS
from albert_cli.cli import UsageError, flag_text, require, run_main
from albert_cli.command import run_fine_tuning
from albert_cli.task_config import config_from_flags
from albert_tf.glue.recipes import paper_recipe
from albert_tf.glue.tasks import TASKS, get_task
from albert_tf.tasks import ClassifierConfig, ConfigError

# What the command does is `albert_tf.tasks.own_data_task.classifier_task` on the fine-tuning driver
# (`albert_tf.tasks.driver`), both imported past --help and the flag checks (TensorFlow).

FLAGS = flags.FLAGS

task_flags.define_task_flags(output_dir="output/glue")
flags.adopt_module_key_flags(task_flags)  # shown by --help
flags.DEFINE_string("task_name", "SST-2", f"GLUE task, one of {', '.join(TASKS)} (case-insensitive).")
flags.DEFINE_string("data_dir", GLUE_SAMPLES, "GLUE directory: <data_dir>/<TASK>/{train,dev,test}.tsv "
                    "(default: the bundled samples).")
flags.DEFINE_string("tfds_data_dir", None, "Read glue/<task> from this prepared TFDS directory instead.")
flags.DEFINE_integer("max_seq_length", 512, "Longest packed sequence; longer inputs are truncated.", lower_bound=3)
flags.DEFINE_bool("do_train", False, "Fine-tune on the train split.")
flags.DEFINE_bool("do_eval", False, "Report dev metrics (of the best checkpoint when training).")
flags.DEFINE_bool("do_predict", False, "Write GLUE submission files for the test split(s).")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.", lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 32, "Batch size for evaluation and prediction.", lower_bound=1)
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("train_step", 1000, "Number of training steps.", lower_bound=1)
flags.DEFINE_integer("warmup_step", 0, "Linear warmup steps.", lower_bound=0)
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Evaluate and checkpoint every this many steps.", lower_bound=1)
flags.DEFINE_string("export_dir", None, "Write a TF Serving SavedModel (<export_dir>/<version>/).")
export_flags.define_export_flags()
flags.adopt_module_key_flags(export_flags)  # shown by --help
flags.DEFINE_string("export_tflite", None, "Write LiteRT models of the classifier (float32 and dynamic-range int8) "
                    "that MediaPipe's TextClassifier runs on raw text to this directory (single-text tasks).")
flags.DEFINE_integer("tflite_seq_length", 128, "With --export_tflite: the tokens of the models' input shape; "
                     "MediaPipe truncates and pads every text to it.", lower_bound=3)
task_flags.refuse_empty("export_dir", "export_tflite")
flags.DEFINE_enum("export_serving_tflite", None, list(TFLITE_QUANTIZATIONS),
                  "With --export_dir: also put the classifier's LiteRT model (float32 or dynamic-range int8 "
                  "weights) in the version directory as model.tflite, which TF Serving serves instead of the "
                  "TensorFlow graph with --prefer_tflite_model=true (token ids in, logits out).")
flags.DEFINE_enum("recipe", "none", ["none", "paper"],
                  "`paper`: the original's per-task hyperparameters (explicit flags still win).")
flags.DEFINE_bool("recompute", False, "Keep only each Transformer block's input for the backward pass and "
                  "recompute the rest there: less memory, about one more forward pass of time (needs dropout 0).")
flags.DEFINE_integer("seeds", 1, "Train with this many seeds (seed, seed+1, ...); report mean/std/best.", lower_bound=1)
flags.DEFINE_bool("reinit_pooler", False, "Re-initialise the pooler after loading --init_checkpoint "
                  "instead of keeping its pretrained weights (the original keeps them).")
flags.DEFINE_enum("padding", "dynamic", PADDING_MODES,
                  "`dynamic`: pad each batch to its longest row; `bucketed`: also batch training rows "
                  "of similar length together (faster, other batches); `fixed`: to max_seq_length.")


flags.DEFINE_list("label_names", None, "Names of the labels, in logit order: a GLUE task's names in its exports "
                  "and Hugging Face config (default: the task's own, SST-2's negative,positive); with --train_file "
                  "the labels a row may have and their order (default: the train file's values, sorted).")
# One's own data (albert_tf/tasks/own_data_task.py): given --train_file, --dev_file or --test_file.
flags.DEFINE_string("train_file", None, "Fine-tune on one's own CSV, TSV or JSON Lines file (instead of "
                    "--task_name): a header row (CSV, TSV) or one object a line (JSON Lines) with the columns below.")
flags.DEFINE_string("dev_file", None, "With --train_file: the dev rows (default: --dev_fraction of the train file's).")
flags.DEFINE_string("test_file", None, "With --train_file: the rows --do_predict labels (no label column needed), "
                    "into <output_dir>/predictions.tsv.")
flags.DEFINE_enum("file_format", None, list(TABLE_FILE_FORMATS), "Format of the files (default: from each one's "
                  "extension: .csv, .tsv/.tab, .jsonl/.ndjson).")
flags.DEFINE_string("text_column", "text", "The column of the text.")
flags.DEFINE_string("text_pair_column", None, "The column of the second text of a pair (default: one text).")
flags.DEFINE_string("label_column", "label", "The column of the label (a name, or a number with --regression).")
flags.DEFINE_bool("regression", False, "The label is a number to predict (one output, mean squared error), not a class.")
flags.DEFINE_list("metrics", None, "Dev metrics, the first picks the best checkpoint: accuracy, f1 (macro over "
                  "more than two labels), mcc; for --regression pearson, spearman, mse (default: accuracy; "
                  "pearson,spearman,mse).")
flags.DEFINE_float("dev_fraction", 0.1, "Without --dev_file: this share of the train file's rows is the dev split.")
flags.DEFINE_integer("dev_split_seed", 0, "Without --dev_file: the seed of the shuffle that picks the dev rows "
                     "(apart from --seed: every --seeds run is scored on the same rows).")


def own_data_given(flag_values):
    return any(flag_values[name].value for name in ("train_file", "dev_file", "test_file"))


def apply_recipe(task):
    if FLAGS.recipe != "paper":
        return
    recipe = paper_recipe(task)
    for name, value in recipe.items():
        if not FLAGS[name].present:
            FLAGS[name].value = value
    # The values in effect: explicit flags win over the recipe.
    logging.info("recipe paper for %s: %s", task.name, ", ".join(
        f"{name}={FLAGS[name].value}" + (" (flag)" if FLAGS[name].present else "") for name in recipe))


flags.register_multi_flags_validator(
    ["export_serving_tflite", "export_dir"], lambda values: not values["export_serving_tflite"] or values["export_dir"],
    message="--export_serving_tflite writes into the SavedModel of --export_dir: give --export_dir too")
flags.register_multi_flags_validator(
    ["do_train", "do_eval", "do_predict", "export_dir", "export_tflite"], lambda values: any(values.values()),
    message="nothing to do: give at least one of --do_train, --do_eval, --do_predict, --export_dir, --export_tflite")
flags.register_multi_flags_validator(
    ["task_name", "tfds_data_dir", "recipe", "train_file", "dev_file", "test_file"],
    lambda values: not (values["train_file"] or values["dev_file"] or values["test_file"]) or not (
        FLAGS["task_name"].present or values["tfds_data_dir"] or values["recipe"] != "none"),
    message="--train_file/--dev_file/--test_file are one's own data: --task_name, --tfds_data_dir and --recipe "
            "are GLUE's; give one or the other")
flags.register_validator("dev_fraction", lambda value: 0 < value < 1, message="expected a share between 0 and 1")
for _name in ("spm_model_file", "albert_config_file"):
    flags.register_validator(_name, lambda path: "://" in path or os.path.exists(path), message="file does not exist")


def make_task(flag_values):
    """The task the flags name (`own_data_task.classifier_task`: one's own data or a GLUE task, its
    --recipe applied to the flags first), what it reports printed."""
    from albert_tf.tasks.own_data_task import classifier_task  # pylint: disable=g-import-not-at-top (TensorFlow)

    if not own_data_given(flag_values):
        apply_recipe(get_task(flag_values.task_name))
    return classifier_task(config_from_flags(ClassifierConfig, flag_values), print)


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    run_fine_tuning(make_task(FLAGS))


@dataclasses.dataclass
class FineTuned:
    """What `fine_tune` did: the run's directory, `--do_eval`'s dev metrics (else None) and the
    SavedModel `--export_dir` got (else None)."""

    output_dir: str
    metrics: dict
    saved_model: str


def fine_tune(**flag_values):
    """The command from Python, in this process: `fine_tune(train_file="reviews.csv", do_train=True,
    do_eval=True)` does what `albert-classify --train_file=reviews.csv --do_train --do_eval` does,
    with the same defaults; returns a `FineTuned`. Bad input raises `UsageError` (or the library's
    ValueError), one line as the command prints it."""
    from absl.flags import Error as FlagError  # pylint: disable=g-import-not-at-top

    def spelled(name, value):
        if isinstance(value, bool):
            return f"--{name}" if value else f"--no{name}"
        return f"--{name}={','.join(map(str, value)) if isinstance(value, (list, tuple)) else value}"

    FLAGS.unparse_flags()  # a second call starts from the defaults too
    try:
        FLAGS(["albert-classify"] + [spelled(name, value) for name, value in flag_values.items()])
    except FlagError as error:
        raise UsageError(str(error).splitlines()[0]) from None
    try:
        task = make_task(FLAGS)
        run_fine_tuning(task)
    except ConfigError as error:
        raise UsageError(flag_text(error)) from None
    results = os.path.join(FLAGS.output_dir, "eval_results.json")
    metrics = None
    if FLAGS.do_eval:
        with open(results, encoding="utf-8") as handle:
            metrics = json.load(handle)
    return FineTuned(FLAGS.output_dir, metrics, (task.saved_model_paths or [None])[0])


def console_main():
    """The `albert-classify` command."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
