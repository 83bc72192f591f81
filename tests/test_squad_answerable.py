"""`albert_cli.squad_answerable`: the bundled SQuAD 2.0 slice's answerable questions, as files a
SQuAD 1.1 run (and the question-answering exports' docs) reads."""

import json
import os
import subprocess
import sys

import pytest

from albert_tf.error_text import SettingError
from albert_tf.squad.answerable import answerable_only
from albert_tf.squad.examples import read_squad_examples

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED = {part: os.path.join(REPO, "data", "squad", f"{part}-v2.0-sample.json") for part in ("train", "dev")}


def answerable_ids(path):
    return [qa["id"] for article in json.load(open(path, encoding="utf-8"))["data"]
            for paragraph in article["paragraphs"] for qa in paragraph["qas"] if not qa.get("is_impossible")]


@pytest.mark.parametrize("part", ["train", "dev"])
def test_the_bundled_slice_gives_a_v1_file_of_its_answerable_questions(tmp_path, part):
    with pytest.raises(SettingError, match="is unanswerable"):
        read_squad_examples(BUNDLED[part], is_training=part == "train", version_2_with_negative=False)
    output = str(tmp_path / f"{part}-answerable.json")
    counts = answerable_only(BUNDLED[part], output)
    examples = read_squad_examples(output, is_training=part == "train", version_2_with_negative=False)
    assert [example.qas_id for example in examples] == answerable_ids(BUNDLED[part])
    assert 0 < counts["kept"] == len(examples) < counts["questions"]
    assert json.load(open(output, encoding="utf-8"))["version"] == "1.1"


def test_the_command_writes_the_file_and_refuses_to_replace_its_input(tmp_path):
    command = [sys.executable, "-m", "albert_cli.squad_answerable", f"--input_file={BUNDLED['dev']}"]
    done = subprocess.run(command + [f"--output_file={tmp_path / 'dev.json'}"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "questions are answerable" in done.stdout and os.path.isfile(tmp_path / "dev.json")
    refused = subprocess.run(command + [f"--output_file={BUNDLED['dev']}"], cwd=REPO, capture_output=True,
                             text=True, timeout=300)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].endswith("the output would replace its input; give another file")
