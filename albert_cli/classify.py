"""Fine-tunes, evaluates and exports ALBERT on a GLUE task (TF2 port of the original's run_classifier.py).

    albert-classify --task_name=SST-2 --do_train --do_eval --train_step=300 \\
        --output_dir=output/glue/SST-2 --export_dir=output/glue/SST-2/export

(`python run_classifier.py ...` in a checkout). Defaults point at the bundled data (data/glue,
the official SentencePiece model, the tiny config). Evaluation runs every --save_checkpoints_steps
during training and keeps the best checkpoint by the task's metric (<output_dir>/best);
--seeds=N repeats training with N seeds and reports mean, standard deviation and best.
"""

import os

from albert_cli.cli import prefer_onednn
from albert_cli.tensorflow_logs import quiet_tensorflow

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

from absl import flags, logging

from albert_cli.bundled import GLUE_SAMPLES
from albert_cli import export_flags, task_flags
from albert_tf.choices import PADDING_MODES, TFLITE_QUANTIZATIONS
from albert_cli.cli import require, run_main
from albert_tf.glue.recipes import paper_recipe
from albert_tf.glue.tasks import TASKS

# What the command does is `albert_cli.fine_tuning.glue` on the fine-tuning driver, imported in
# `main`: TensorFlow loads only past --help and the flag checks.

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
for _name in ("spm_model_file", "albert_config_file"):
    flags.register_validator(_name, lambda path: "://" in path or os.path.exists(path), message="file does not exist")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    from albert_cli.fine_tuning import driver, glue  # pylint: disable=g-import-not-at-top (TensorFlow)

    task = glue.GlueTask(FLAGS)
    apply_recipe(task.glue_task)
    driver.run(task)


def console_main():
    """The `albert-classify` command."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
