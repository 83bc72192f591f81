"""bench/glue_text_corpus.py: GLUE text of one split as a pretraining corpus, without labels."""

import os
import subprocess
import sys

from glue_test_data import GLUE_DIR, REPO

from albert_tf.glue.examples import read_examples
from albert_tf.glue.tasks import get_task

SCRIPT = os.path.join(REPO, "bench", "glue_text_corpus.py")


def _run(*flags):
    return subprocess.run([sys.executable, SCRIPT, *flags], capture_output=True, text=True, timeout=300)


def _documents(path):
    with open(path, encoding="utf-8") as handle:
        return [block.split("\n") for block in handle.read().strip("\n").split("\n\n")]


def test_training_text_only_pairs_as_documents(tmp_path):
    output = tmp_path / "train.txt"
    result = _run(f"--data_dir={GLUE_DIR}", f"--output_file={output}", "--tasks=SST-2,MRPC",
                  "--sentences_per_document=3")
    assert result.returncode == 0, result.stderr
    sst2 = read_examples(get_task("SST-2"), "train", data_dir=GLUE_DIR).examples
    mrpc = read_examples(get_task("MRPC"), "train", data_dir=GLUE_DIR).examples
    documents = _documents(output)
    single, pairs = documents[: -len(mrpc)], documents[-len(mrpc):]
    assert [line for document in single for line in document] == [" ".join(e.text_a.split()) for e in sst2]
    assert all(len(document) <= 3 for document in single)
    assert pairs[0] == [" ".join(mrpc[0].text_a.split()), " ".join(mrpc[0].text_b.split())]
    dev = {" ".join(e.text_a.split()) for e in read_examples(get_task("SST-2"), "dev", data_dir=GLUE_DIR).examples}
    train = {" ".join(e.text_a.split()) for e in sst2}
    written = {line for document in single for line in document}
    assert not (dev - train) & written  # no dev-only sentence leaks into the training corpus


def test_missing_data_dir_is_one_line_error_and_no_file(tmp_path):
    output = tmp_path / "train.txt"
    result = _run(f"--data_dir={tmp_path / 'nowhere'}", f"--output_file={output}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: --data_dir:")
    assert "Traceback" not in result.stderr
    assert not output.exists()
