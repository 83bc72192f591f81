"""Fine-tunes ALBERT on RACE (4-way multiple choice) and reports accuracy on middle, high and all
(TF2 port of the original's run_race.py).

    albert-race --data_dir=data_root --do_train --do_eval --do_predict \\
        --init_checkpoint=albert_base/model.ckpt-best --albert_config_file=albert_base/albert_config.json \\
        --output_dir=output/race

--data_dir holds RACE/{train,dev,test}/{middle,high}/ as the official download unpacks (one
JSON passage per .txt file, or the original's all.txt with one passage per line). Training
evaluates dev accuracy every --save_checkpoints_steps and keeps the best checkpoint
(<output_dir>/best); --export_dir writes a SavedModel that picks options from raw text. `python
run_race.py ...` in a checkout.
"""

from absl import flags

from albert_cli import export_flags, task_flags
from albert_cli.command import fine_tuning_command
from albert_tf.tasks import RaceConfig
from albert_tf.choices import MAX_RACE_QUESTIONS

FLAGS = flags.FLAGS

task_flags.define_task_flags(output_dir="output/race")
flags.adopt_module_key_flags(task_flags)  # shown by --help
# This task's own flags: shaped like the other tasks', with its own defaults and help (shared flags: task_flags).
flags.DEFINE_string("data_dir", None, "Folder holding RACE/{train,dev,test}/{middle,high}/.")
flags.DEFINE_integer("max_seq_length", 512, "Length of each [CLS] article [SEP] question+option [SEP] row.")
flags.DEFINE_integer("max_qa_length", 128, "The question + option keeps its last this many pieces.")
flags.DEFINE_bool("do_train", False, "Fine-tune on the train split.")
flags.DEFINE_bool("do_eval", False, "Report dev accuracy (of the best checkpoint when training).")
flags.DEFINE_bool("do_predict", False, "Report test accuracy and write test predictions.")
flags.DEFINE_bool("high_only", False, "Use only the high-school questions.")
flags.DEFINE_bool("middle_only", False, "Use only the middle-school questions.")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.")
flags.DEFINE_integer("eval_batch_size", 8, "Batch size for evaluation.")
flags.DEFINE_integer("predict_batch_size", 8, "Batch size for prediction.")
flags.DEFINE_float("learning_rate", 1e-5, "Peak learning rate (the README's v2 recipe).")
flags.DEFINE_integer("train_step", 12000, "Number of training steps.")
flags.DEFINE_integer("warmup_step", 1000, "Linear warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 100, "Evaluate and checkpoint every this many steps.")
flags.DEFINE_string("export_dir", None, "Write a TF Serving SavedModel choosing options from raw text "
                    "(<export_dir>/<version>/).")
task_flags.refuse_empty("export_dir")
export_flags.define_export_flags(MAX_RACE_QUESTIONS, rows="questions (4 model rows each)")
flags.adopt_module_key_flags(export_flags)  # shown by --help

console_main = fine_tuning_command(FLAGS, "race", "RaceTask", RaceConfig, __name__)  # the `albert-race` command


if __name__ == "__main__":
    console_main()
