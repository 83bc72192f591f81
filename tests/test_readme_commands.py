"""The README's commands run as written: read from its code blocks, with their outputs moved to a
temporary directory and, where the README trains for minutes, fewer steps and rows."""

import os
import shlex
import subprocess
import sys

import pytest
import tensorflow as tf

from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import head_of_shipped

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def readme_commands(needle):
    """The commands of the README's bash blocks (continuation lines joined) that contain `needle`."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        blocks = handle.read().split("```bash\n")[1:]
    lines = [line for block in blocks for line in block.split("```")[0].replace("\\\n", " ").splitlines()]
    return [line for line in lines if needle in line]


def run(command, **replacements):
    for old, new in replacements.items():
        assert old in command, (old, command)
        command = command.replace(old, new)
    words = [sys.executable if word == "python" else word for word in shlex.split(command, comments=True)]
    return subprocess.run(words, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_the_sentencepiece_example_runs_on_the_bundled_sample(tmp_path):
    (command,) = readme_commands("--input=data/corpus/pretraining_sample.txt")
    command = command.split("&&", 1)[1]  # the `mkdir -p output` before it
    result = run(command, **{"output/books-8k": str(tmp_path / "books-8k")})
    assert result.returncode == 0, result.stderr[-3000:]
    assert AlbertTokenizer(spm_model_file=str(tmp_path / "books-8k.model")).vocab_size == 8000


@pytest.mark.slow
def test_the_glue_command_can_be_rerun_and_its_export_shown(tmp_path):
    (train,) = readme_commands("python run_classifier.py")
    (show,) = readme_commands("saved_model_cli show")
    output_dir = str(tmp_path / "SST-2")
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=32)  # the bundled rows, fewer
    fewer_steps = {"output/glue/SST-2": output_dir, "--train_step=300": f"--train_step=2 --data_dir={data_dir}",
                   "--save_checkpoints_steps=100": "--save_checkpoints_steps=2"}
    first = run(train, **fewer_steps)
    assert first.returncode == 0, first.stderr[-3000:]
    again = run(train, **fewer_steps)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing to train" in again.stderr
    versions = sorted(map(int, os.listdir(os.path.join(output_dir, "export"))))
    assert len(versions) == 2
    assert f"exported the serving SavedModel to {os.path.join(output_dir, 'export', str(versions[1]))}" in again.stdout
    shown = subprocess.run(["bash", "-c", show.replace("output/glue/SST-2", output_dir)], cwd=REPO, env=ENV,
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "serving_default" in shown.stdout and "sentence" in shown.stdout


@pytest.mark.slow
def test_the_data_commands_split_build_a_pair_and_train_on_one_evaluating_on_the_other(tmp_path):
    (split,) = readme_commands("python -m albert_cli.split_corpus --input_file=corpus.txt")
    build_train, build_heldout = readme_commands("python -m albert_cli.create_pretraining_data")
    (train,) = readme_commands("python run_pretraining.py --input_file=")
    corpus = tmp_path / "corpus.txt"
    with open(os.path.join(REPO, "data", "corpus", "sample.txt"), encoding="utf-8") as handle:
        corpus.write_text("".join(handle.readlines()[:300]), encoding="utf-8")
    text = tmp_path / "text"
    split_run = run(split, **{"--input_file=corpus.txt": f"--input_file={corpus}", "--output_dir=text": f"--output_dir={text}"})
    assert split_run.returncode == 0, split_run.stderr[-3000:]
    records = {}
    for build, part in ((build_train, "train"), (build_heldout, "heldout")):
        records[part] = str(tmp_path / f"{part}.tfrecord")
        built = run(build, **{f"--input_file=text/{part}.txt": f"--input_file={text / (part + '.txt')} --dupe_factor=1",
                              f"--output_file={part}.tfrecord": f"--output_file={records[part]}"})
        assert built.returncode == 0, built.stderr[-3000:]
        assert "paragraph" not in built.stderr  # sentence-per-line text: no warning about long lines
    output_dir = tmp_path / "pretraining"
    trained = run(train, **{"--input_file=train.tfrecord": f"--input_file={records['train']}",
                            "--eval_input_file=heldout.tfrecord": f"--eval_input_file={records['heldout']}",
                            "--output_dir=output/my_pretraining": f"--output_dir={output_dir} --num_train_steps=2 "
                            "--num_warmup_steps=0 --iterations_per_loop=1 --train_batch_size=4 --max_eval_steps=1 "
                            "--eval_batch_size=2"})  # 300 lines hold out a few instances
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-2")
    assert "training files" not in trained.stderr + trained.stdout  # no "evaluating on its training files"
