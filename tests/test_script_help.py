"""Every script's --help: exit status 0, TensorFlow not imported (help comes at once), the usage
examples with their line breaks, no pointer to docs/; bundled flag files found from any directory."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The data commands answer to both names (docs/data.md).
DATA = ("albert_cli", "data_prep")
# (command, a line of its usage examples as the help must show it, a flag of its own)
SCRIPTS = [
    (["run_pretraining.py"], "albert-pretrain --flagfile=configs/pretraining_paper.flags \\", "--num_train_steps"),
    (["run_classifier.py"], "albert-classify --task_name=SST-2 --do_train --do_eval --train_step=300 \\", "--task_name"),
    (["export_encoder.py"], "albert-export-encoder --init_checkpoint=output/pretraining --export_dir=output/hub",
     "--export_version"),
    *[(["-m", f"{package}.create_pretraining_data"],
       "python -m albert_cli.create_pretraining_data --input_file=corpus.txt \\", "--dupe_factor") for package in DATA],
    *[(["-m", f"{package}.train_sentencepiece"], "python -m albert_cli.train_sentencepiece --input=corpus/*.txt "
       "--model_prefix=out/30k \\", "--vocab_size") for package in DATA],
    *[(["-m", f"{package}.beam_pipeline"], "python -m albert_cli.beam_pipeline --input_file='gs://bucket/corpus/*.txt' \\",
       "--dupe_factor") for package in DATA],
    (["-m", "albert_cli.convert"], "albert-convert --from=albert-base-v2 --to=out/albert_base --format=tf1", "--format"),
    (["-m", "albert_cli.experiments"], "albert-experiments sharing --output_dir=output/experiments/sharing", "--scale"),
    (["run_squad.py"], "albert-squad --version_2_with_negative --do_train --do_predict \\", "--doc_stride"),
    (["run_race.py"], "albert-race --data_dir=data_root --do_train --do_eval --do_predict \\", "--max_qa_length"),
    *[(["-m", f"{package}.split_corpus"], "python -m albert_cli.split_corpus --input_file=books.txt --output_dir=text/ \\",
       "--heldout_fraction") for package in DATA],
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
    # No warning (Beam's about apitools and BigQuery): stderr holds only -X importtime's lines.
    assert not [line for line in result.stderr.splitlines() if not line.startswith("import time:")], result.stderr
    help_lines = [line.strip() for line in result.stdout.splitlines()]
    assert usage_line in help_lines, result.stdout[:3000]
    assert any(line.startswith(own_flag) for line in help_lines)
    assert "docs/" not in result.stdout  # a wheel installs no docs/


def test_help_into_a_pipe_closed_early_ends_without_a_traceback():
    """`run_classifier.py --help | head -3`: here the reader is gone before the help is written."""
    process = subprocess.Popen([sys.executable, "run_classifier.py", "--help"], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.close()  # the script takes a moment to start: nothing is written yet
    stderr = process.stderr.read()
    assert process.wait(timeout=300) == 128 + signal.SIGPIPE, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


PRINT_PRETRAINING_FLAGS = """
from absl import flags
from albert_cli import pretrain
from albert_cli.cli import run_main
run_main(lambda argv: print(flags.FLAGS.albert_config_file, flags.FLAGS.train_batch_size))
"""


@pytest.mark.parametrize("flag_file, config, batch_size", [
    ("configs/pretraining_paper.flags", "albert_base.json", 4096),  # albert-pretrain --help's example
    ("configs/pretraining_cpu_gutenberg_vocab8k.flags", "albert_cpu_small_vocab8k.json", 64),  # includes another
])
def test_bundled_flag_files_and_the_configs_they_name_are_found_from_any_directory(tmp_path, flag_file, config,
                                                                                   batch_size):
    env = {**os.environ, "PYTHONPATH": REPO_ROOT}
    result = subprocess.run([sys.executable, "-c", PRINT_PRETRAINING_FLAGS, f"--flagfile={flag_file}"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    config_file, train_batch_size = result.stdout.split()
    assert os.path.samefile(config_file, os.path.join(REPO_ROOT, "configs", config)) and int(train_batch_size) == batch_size
    missing = subprocess.run([sys.executable, "-c", PRINT_PRETRAINING_FLAGS, "--flagfile=configs/missing.flags"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr == \
        "error: --flagfile=configs/missing.flags: cannot read it (No such file or directory)\n"
