"""The model library on JAX and PyTorch with TensorFlow unimportable, against the TensorFlow
backend and Hugging Face's PyTorch ALBERT.

One subprocess per backend (`backend_run.py`, with `sys.modules["tensorflow"] = None` before
anything is imported) builds, calls, saves and reloads every model kind, checks the weights the
backends before it saved (TensorFlow's, then JAX's for PyTorch; this process checks JAX's and
PyTorch's on TensorFlow afterwards), and equals HF on outputs and training gradients for groups
with inner groups and E != H (read by the HF safetensors reader, and with recomputation) and for
sharing "none" (HF's one group per layer, through a `.weights.h5` file), each also with the
"eager" kernel set, and reads a keras-hub
preset written on TensorFlow. Run with `pytest -s` to
see the measured differences.
"""

import json
import os

import numpy as np
import pytest

import backend_run
from backend_process import completed_on_backend, script_code
from albert_tf import AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import load, save_keras_hub_preset
from test_parity_huggingface import (BATCH, MASKED_WEIGHTS, SOP_LABELS, _hf_gradients, _hf_model, _hf_outputs, _inputs,
                                     _write_tf1_checkpoint_from_hf)

BACKENDS = ("jax", "torch")
HERE = os.path.dirname(os.path.abspath(__file__))


def _huggingface_case(name, config, hf_groups, directory):
    """HF's model with random weights (HF's group count `hf_groups`), its outputs and gradients."""
    hf_model = _hf_model(config.replace(num_hidden_groups=hf_groups), seed=1)
    inputs = _inputs(config.vocab_size)
    rng = np.random.default_rng(3)
    labels = {"masked_lm_ids": rng.integers(5, config.vocab_size, size=(BATCH, 4)).astype(np.int32),
              "masked_lm_weights": np.array(MASKED_WEIGHTS, np.float32),
              "next_sentence_labels": np.array(SOP_LABELS, np.int32)}
    loss, grads = _hf_gradients(hf_model, inputs, labels)
    expected = {"loss": np.float64(loss),
                **{f"output:{key}": value for key, value in _hf_outputs(hf_model, inputs).items()},
                **{f"input:{key}": value for key, value in inputs.items()},
                **{f"label:{key}": value for key, value in labels.items()},
                **{f"gradient:{key}": value for key, value in grads.items()}}
    case_dir = os.path.join(directory, name)
    os.makedirs(case_dir)
    if hf_groups == config.num_hidden_groups:  # the HF checkpoint itself, for our HF reader
        hf_model.save_pretrained(case_dir)
        weights = case_dir
    else:  # our sharing "none" holds HF's one-group-per-layer weights under other names: a weights file
        _write_tf1_checkpoint_from_hf(hf_model, os.path.join(case_dir, "from_hf"))
        model = AlbertPretrainingModel(config)
        load(model, os.path.join(case_dir, "from_hf"))
        weights = os.path.join(case_dir, "model.weights.h5")
        model.save_weights(weights)
    np.savez(os.path.join(case_dir, "expected.npz"), **expected)
    return {"name": name, "config": config.to_dict(), "weights": weights, "expected": os.path.join(case_dir, "expected.npz"),
            "recompute": hf_groups == config.num_hidden_groups}


@pytest.fixture(scope="module")
def backend_runs(tmp_path_factory):
    """{backend: its report}, the backends run one after the other (each checks those before it)."""
    work = tmp_path_factory.mktemp("backends")
    grouped = backend_run.small_config().replace(vocab_size=500, max_position_embeddings=64)
    unshared = grouped.replace(num_hidden_groups=1, inner_group_num=1, sharing="none")
    cases = [_huggingface_case("groups 2, inner groups 2, E != H", grouped, 2, str(work)),
             _huggingface_case("sharing none", unshared, unshared.num_hidden_layers, str(work))]
    done = [str(work / "tensorflow")]
    backend_run.save_every_kind(done[0], seed=11)
    backbone = AlbertModel(backend_run.small_config())
    backbone.load_weights(os.path.join(done[0], "backbone.weights.h5"))
    preset = save_keras_hub_preset(backbone, os.path.join(done[0], "preset"))
    reports = {}
    for seed, backend in enumerate(BACKENDS, 12):
        spec = work / f"{backend}.json"
        spec.write_text(json.dumps({"work": str(work / backend), "seed": seed, "check": list(done), "huggingface": cases,
                                    "keras_hub_preset": preset}))
        run = completed_on_backend(backend, script_code(os.path.join(HERE, "backend_run.py"), str(spec)), timeout=900)
        reports[backend] = (run.returncode, run.stdout, run.stderr)
        done.append(str(work / backend))
    return reports, done


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_model_kind_on_the_backend_without_tensorflow(backend_runs, backend):
    reports, _ = backend_runs
    returncode, stdout, stderr = reports[backend]
    assert returncode == 0, stderr[-4000:]
    report = json.loads(stdout.strip().splitlines()[-1])
    print(f"\n[{backend}] {json.dumps(report, indent=1)}")
    assert report["backend"] == backend
    assert sorted(report["loaded from"]) == (["tensorflow"] if backend == "jax" else ["jax", "tensorflow"])
    assert sorted(report["huggingface"]) == ["groups 2, inner groups 2, E != H", "sharing none"]


def test_weights_saved_on_jax_and_torch_give_their_outputs_on_tensorflow(backend_runs):
    _, done = backend_runs
    for directory in done[1:]:
        assert os.path.exists(os.path.join(directory, "pretraining.weights.h5")), f"{directory}: that backend failed"
        print(f"\n[tensorflow] from {os.path.basename(directory)}: {backend_run.check_saved_elsewhere(directory)}")
