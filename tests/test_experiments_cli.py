"""`python -m albert_cli.experiments`: bad input is one line on stderr, exit 2, nothing written."""

import os

import pytest

import script_process

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return script_process.run_python(["-m", "albert_cli.experiments", *args], cwd=REPO_ROOT, env=env, timeout=600)


@pytest.mark.parametrize("args, expected", [
    (["nope"], "<name> is one of layer_transitions, size_and_speed"),
    (["sharing", "--corpus_file=/no/such/corpus.txt"], "--corpus_file: /no/such/corpus.txt does not exist"),
    (["sharing", "--scale=0"], "--scale must be a finite number > 0"),
    (["sharing", "--glue_data_dir=/no/glue"], "--glue_data_dir: /no/glue/MRPC does not exist"),
    (["sharing", "--speed_models=bert_base"], "--speed_models applies to size_and_speed only"),
    (["layer_transitions", "--init_checkpoint=/tmp/x"], "--init_checkpoint needs --albert_config_file"),
    (["sharing", "--redraw=/no/such.json"], "--redraw /no/such.json: cannot read it as JSON"),
    (["sharing", "--redraw=docs/paper_experiments/sop_vs_nsp.json"], "not sharing results (missing or malformed field"),
    (["layer_transitions", "--redraw=docs/paper_experiments/sharing.json"], "--redraw applies to the experiments"),
])
def test_bad_input_is_one_line(tmp_path, args, expected):
    output_dir = tmp_path / "out"
    result = _run(args + [f"--output_dir={output_dir}"])
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not output_dir.exists()
