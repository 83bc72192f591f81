"""Fine-tunes ALBERT on SQuAD v1.1 or v2.0 and writes its answers (TF2 port of the original's
run_squad_v1.py and run_squad_v2.py, one command: `--version_2_with_negative` selects v2.0).

    albert-squad --version_2_with_negative --do_train --do_predict \\
        --train_file=train-v2.0.json --predict_file=dev-v2.0.json \\
        --init_checkpoint=albert_base/model.ckpt-best --albert_config_file=albert_base/albert_config.json \\
        --output_dir=output/squad2

Training evaluates on --predict_file every --save_checkpoints_steps and keeps the best
checkpoint by F1 (<output_dir>/best). --do_predict writes predictions.json,
nbest_predictions.json, null_odds.json (v2.0) and, when the file has gold answers, the official
metrics in eval_results.json; --export_dir writes a SavedModel answering raw text. `python
run_squad.py ...` in a checkout.
"""

from absl import flags

from albert_cli import export_flags, task_flags
from albert_cli.command import fine_tuning_command
from albert_tf.tasks import SquadConfig
from albert_tf.choices import END_N_TOP, START_N_TOP

FLAGS = flags.FLAGS

task_flags.define_task_flags(output_dir="output/squad")
flags.adopt_module_key_flags(task_flags)  # shown by --help
# This task's own flags: shaped like the other tasks', with its own defaults and help (shared flags: task_flags).
flags.DEFINE_string("train_file", None, "SQuAD JSON for training, e.g. train-v1.1.json or train-v2.0.json.")
flags.DEFINE_string("predict_file", None, "SQuAD JSON to answer (and score, if it has answers), e.g. dev-v2.0.json.")
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: questions may have no answer.")
flags.DEFINE_integer("max_seq_length", 384, "Length of a window: [CLS] question [SEP] paragraph part [SEP].")
flags.DEFINE_integer("doc_stride", 128, "Pieces between the starts of a paragraph's windows.")
flags.DEFINE_integer("max_query_length", 64, "Questions keep this many pieces at most.")
flags.DEFINE_bool("do_train", False, "Fine-tune on --train_file (evaluating on --predict_file).")
flags.DEFINE_bool("do_predict", False, "Answer --predict_file with the best (or the --init_checkpoint) model.")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size (the README's runs use 48).")
flags.DEFINE_integer("predict_batch_size", 8, "Batch size for prediction.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_float("num_train_epochs", 3.0, "Epochs over the training questions (steps = questions / batch x epochs).")
flags.DEFINE_float("warmup_proportion", 0.1, "Share of the steps with a linear warmup.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Evaluate and checkpoint every this many steps.")
flags.DEFINE_integer("n_best_size", 20, "Answers kept per question in nbest_predictions.json.")
flags.DEFINE_integer("max_answer_length", 30, "Longest answer, in pieces.")
flags.DEFINE_integer("start_n_top", START_N_TOP, "v2.0: start positions searched per window.")
flags.DEFINE_integer("end_n_top", END_N_TOP, "v2.0: end positions searched per start.")
flags.DEFINE_float("dropout_prob", 0.1, "v2.0: dropout in the answerability layer.")
flags.DEFINE_bool("recompute", False, "Keep only each Transformer block's input for the backward pass and "
                  "recompute the rest there: less memory for long windows, about one more forward pass of time "
                  "(needs the config's dropout 0; the answerability layer's --dropout_prob is outside the block).")
flags.DEFINE_float("null_score_diff_threshold", None,
                   "v2.0: answer \"\" when the no-answer score reaches this. Default: the best-F1 threshold "
                   "found on --predict_file, as the original (or the one stored with the best checkpoint).")
flags.DEFINE_string("export_dir", None, "Write a TF Serving SavedModel answering raw text (<export_dir>/<version>/).")
flags.DEFINE_string("export_tflite", None, "Write LiteRT models of a SQuAD v1.1 model (float32 and dynamic-range int8) "
                    "that the TFLite Task Library's BertQuestionAnswerer runs on raw text to this directory.")
task_flags.refuse_empty("export_dir", "export_tflite")
export_flags.define_export_flags(rows="questions", windows=True)
flags.adopt_module_key_flags(export_flags)  # shown by --help

console_main = fine_tuning_command(FLAGS, "squad", "SquadTask", SquadConfig, __name__)  # the `albert-squad` command


if __name__ == "__main__":
    console_main()
