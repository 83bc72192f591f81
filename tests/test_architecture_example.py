"""docs/architecture.md's new-task example runs as printed: its `ParaphraseTask`, on the fine-tuning
driver with `albert-classify`'s flags (the shared ones, `--train_file`, `--dev_file`, the batch sizes
and steps) and a `PairData` of one's own pair files (the reading the page leaves to the task), trains,
keeps its best checkpoint by dev accuracy, and a second run finds it finished by the plan's
`steps_setting`."""

import json
import os
import re

from glue_test_data import REPO
import script_process

RUNNER = r"""
import os
import sys

from absl import app

from albert_cli import classify
from albert_cli.command import run_fine_tuning
from albert_cli.task_config import config_from_flags
from albert_tf.glue import own_data
from albert_tf.tasks import ClassifierConfig
from albert_tf.tasks.classifier import SplitData

FLAGS = classify.FLAGS
PAIRS = own_data.own_task(("0", "1"), False, ["text", "text_pair"], ["accuracy"])


class PairData(SplitData):
    def __init__(self, path, tokenizer, cache_dir):
        rows = own_data.read_split(path, "text", "label", "text_pair", label_names=PAIRS.labels)
        split = os.path.splitext(os.path.basename(path))[0]
        super().__init__(config_from_flags(ClassifierConfig, FLAGS), PAIRS, split, tokenizer, cache_dir, rows)


with open(sys.argv.pop(1), encoding="utf-8") as handle:
    exec(handle.read())
app.run(lambda argv: run_fine_tuning(ParaphraseTask(config_from_flags(ClassifierConfig, FLAGS))))
"""

PAIRS = [("the cat sat on the mat", "a cat was sitting on the mat", 1),
         ("he bought a red car", "a red car was bought by him", 1),
         ("it rained all day", "the sun shone all day", 0),
         ("she plays the piano", "the stock market fell", 0)]


def _example():
    with open(os.path.join(REPO, "docs", "architecture.md"), encoding="utf-8") as handle:
        page = handle.read()
    section = page[page.index("## Fine-tuning: one driver"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def _write_pairs(path, rows):
    lines = ["text\ttext_pair\tlabel"] + [f"{a}\t{b}\t{label}" for a, b, label in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_new_task_example_trains_on_the_driver(tmp_path):
    (tmp_path / "example.py").write_text(_example(), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    _write_pairs(tmp_path / "train.tsv", PAIRS * 3)
    _write_pairs(tmp_path / "dev.tsv", PAIRS)
    output_dir = tmp_path / "out"
    args = [str(tmp_path / "runner.py"), str(tmp_path / "example.py"), f"--train_file={tmp_path / 'train.tsv'}",
            f"--dev_file={tmp_path / 'dev.tsv'}", f"--output_dir={output_dir}", "--do_train", "--max_seq_length=24",
            "--train_batch_size=4", "--train_step=4", "--save_checkpoints_steps=2", "--learning_rate=1e-3"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")

    first = script_process.run_python(args, env=env, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"no checkpoint in {output_dir}: fine-tuning from step 0 to step 4" in first.stderr
    with open(output_dir / "best_metrics.json", encoding="utf-8") as handle:
        best = json.load(handle)
    assert best["step"] in (2, 4) and 0.0 <= best["metrics"]["accuracy"] <= 1.0

    again = script_process.run_python(args, env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "is the last step (--train_step=4); nothing to train" in again.stderr
