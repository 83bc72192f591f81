"""Every script's --help: exit status 0, TensorFlow not imported (help comes at once), the usage
examples with their line breaks."""

import os
import re
import subprocess
import sys
import time

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (command, a line of its usage examples as the help must show it, a flag of its own)
SCRIPTS = [
    (["run_pretraining.py"], "albert-pretrain --flagfile=configs/pretraining_paper.flags \\", "--num_train_steps"),
    (["run_classifier.py"], "albert-classify --task_name=SST-2 --do_train --do_eval --train_step=300 \\", "--task_name"),
    (["export_encoder.py"], "albert-export-encoder --init_checkpoint=output/pretraining --export_dir=output/hub",
     "--export_version"),
    (["-m", "data_prep.create_pretraining_data"], "python -m data_prep.create_pretraining_data --input_file=corpus.txt \\",
     "--dupe_factor"),
    (["-m", "data_prep.train_sentencepiece"], "python -m data_prep.train_sentencepiece --input=corpus/*.txt "
     "--model_prefix=out/30k \\", "--vocab_size"),
    (["-m", "data_prep.beam_pipeline"], "python -m data_prep.beam_pipeline --input_file='gs://bucket/corpus/*.txt' \\",
     "--dupe_factor"),
    (["-m", "albert_cli.convert"], "albert-convert --from=albert-base-v2 --to=out/albert_base --format=tf1", "--format"),
    (["-m", "albert_cli.experiments"], "albert-experiments sharing --output_dir=output/experiments/sharing", "--scale"),
]
# Printed when the module is imported (`import time: self | cumulative | name`).
TENSORFLOW_IMPORTED = re.compile(r"^import time:.*\|\s+tensorflow\s*$", re.MULTILINE)


@pytest.mark.parametrize("command, usage_line, own_flag", SCRIPTS, ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_help_exits_0_at_once_with_its_usage(command, usage_line, own_flag):
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-X", "importtime", *command, "--help"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    print(f"{' '.join(command)} --help: {time.perf_counter() - start:.2f} s")  # for the record, not asserted
    assert result.returncode == 0, result.stderr[-3000:]
    assert not TENSORFLOW_IMPORTED.search(result.stderr), "--help imported TensorFlow"
    help_lines = [line.strip() for line in result.stdout.splitlines()]
    assert usage_line in help_lines, result.stdout[:3000]
    assert any(line.startswith(own_flag) for line in help_lines)
