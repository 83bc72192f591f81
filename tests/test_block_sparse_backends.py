"""Block-sparse attention on TensorFlow, JAX and PyTorch: each equal to Hugging Face's BigBird (outputs
and gradients), all three one pattern and one output.

The TensorFlow run is this process's; JAX and PyTorch each run tests/block_sparse_backend_case.py
in a subprocess of their own `KERAS_BACKEND`, with `tensorflow` unimportable (`backend_process`).
"""


import numpy as np
import pytest

import block_sparse_backend_case
from backend_process import run_script_on_backend

OUTPUT_TOLERANCE = 1e-5  # tests/test_parity_bigbird.py's
GRADIENT_TOLERANCE = 1e-4  # tests/test_parity_bigbird.py's, relative to the largest gradient
BACKEND_TOLERANCE = 1e-6  # float32 matmuls summed in other orders
BACKENDS = ("tensorflow", "jax", "torch")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = {"tensorflow": block_sparse_backend_case.run()}
    for backend in BACKENDS[1:]:
        path = tmp_path_factory.mktemp(backend) / "run.npz"
        run_script_on_backend(backend, block_sparse_backend_case.__file__, str(path), timeout=600)
        results[backend] = dict(np.load(path))
    return results


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_layer_equals_huggingface_bigbird_on_every_backend(runs, backend):
    run = runs[backend]
    assert str(run["backend"]) == backend
    assert run["huggingface_pattern"].any()  # HF's train mode: a drawn pattern, not all block 0
    assert np.max(np.abs(run["ours_with_huggingface_pattern"] - run["huggingface"])) < OUTPUT_TOLERANCE
    gradient_error = np.abs(run["ours_with_huggingface_pattern_gradient"] - run["huggingface_gradient"])
    assert np.max(gradient_error) / np.max(np.abs(run["huggingface_gradient"])) < GRADIENT_TOLERANCE


def test_the_backends_draw_one_pattern_and_give_one_output(runs):
    reference = runs["tensorflow"]
    assert reference["drawn_pattern"].any()
    for backend in BACKENDS[1:]:
        np.testing.assert_array_equal(runs[backend]["drawn_pattern"], reference["drawn_pattern"])
        for name in ("ours_with_drawn_pattern", "ours_with_drawn_pattern_gradient"):
            np.testing.assert_allclose(runs[backend][name], reference[name], rtol=0, atol=BACKEND_TOLERANCE)
    # The drawn pattern is not HF's, so the output is another one: the comparison above has teeth.
    assert np.max(np.abs(reference["ours_with_drawn_pattern"] - reference["huggingface"])) > 1e-2
