"""The classifier page (web/) in a real headless Chromium: the scores it shows for typed sentences
are MediaPipe Python's for the same exported file, label names and all.

The `browser` fixture (tests/browser_page.py) installs Chromium and web/'s npm packages when they
are missing: nothing is skipped for want of a browser.
"""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier, AlbertModel
from albert_tf.choices import TFLITE_QUANTIZATIONS
from albert_tf.serving.litert.publish import export_tflite, export_tflite_embedder
from albert_tf.serving.serving_tflite import tflite_classifier
import browser_page
from browser_page import FLOAT_TOLERANCE, bench_browser
from glue_test_data import REPO, SPM_MODEL
from model_test_data import tiny

LABELS = ["negative", "neutral", "positive"]
SEQ_LENGTH = 32
# What a user types: capitals, an accent, digits, runs of spaces, nothing at all, and a text past
# the model's 32 tokens (truncated).
SENTENCES = [
    "A gorgeous, witty, seductive movie.",
    "THE PLOT IS NOTHING BUT BOILERPLATE CLICHÉS!!",
    "  the 2,000-mile   road trip never drags ",
    "",
    "this is one of those rare films that grows on you , scene by scene , until the whole thing "
    "feels earned : funny , sad , angry and , above all , honest about the people it shows .",
]

browser = browser_page.browser


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tiny 3-label classifier's MediaPipe files, float32 and int8: {quantization: path}. Its
    weights are drawn wide (initializer_range 0.2) so that the sentences' scores differ a lot."""
    tf.keras.utils.set_random_seed(5)
    classifier = AlbertClassifier(tiny(num_hidden_layers=2, initializer_range=0.2), num_labels=len(LABELS))
    paths = export_tflite(classifier, str(tmp_path_factory.mktemp("tflite")), SPM_MODEL, LABELS, seq_length=SEQ_LENGTH)
    return dict(zip(TFLITE_QUANTIZATIONS, paths))


@pytest.mark.slow
@pytest.mark.parametrize("quantization", TFLITE_QUANTIZATIONS)
def test_the_page_in_chromium_scores_typed_text_as_mediapipe_python(browser, exported, quantization):
    page = bench_browser.page_results(exported[quantization], SENTENCES, calls=2)
    python = bench_browser.mediapipe_python_results(exported[quantization], SENTENCES)

    assert [result["text"] for result in page["results"]] == SENTENCES
    assert all(result["labels"] == LABELS for result in page["results"])
    page_scores = np.array([result["scores"] for result in page["results"]])
    python_scores = np.array([result["scores"] for result in python["results"]])
    assert np.ptp(python_scores, axis=0).max() > 100 * FLOAT_TOLERANCE  # the sentences differ: the check can fail
    np.testing.assert_allclose(page_scores, python_scores, rtol=0, atol=FLOAT_TOLERANCE)
    np.testing.assert_allclose(page_scores.sum(axis=1), 1, rtol=0, atol=FLOAT_TOLERANCE)  # probabilities
    # Shown on the page: every call's latency, and the load time (the page itself first).
    assert all(len(result["latencies_ms"]) == 2 and min(result["latencies_ms"]) > 0 for result in page["results"])
    assert 0 < page["document_ms"] < page["ready_ms"]


@pytest.mark.slow
def test_the_page_says_which_model_it_cannot_load(browser, tmp_path):
    """A `.tflite` without MediaPipe's metadata (token ids in, nothing to tokenize with): the page
    names the file and what it must be, and classifies nothing."""
    tf.keras.utils.set_random_seed(5)
    plain = tmp_path / "ids_only.tflite"
    plain.write_bytes(tflite_classifier(AlbertClassifier(tiny(num_hidden_layers=1), num_labels=2), "float32"))
    with pytest.raises(RuntimeError, match="Could not load model.tflite: .*require TFLite Model Metadata.* "
                                           "It must be a classifier .tflite with MediaPipe metadata"):
        bench_browser.page_results(str(plain), SENTENCES[:1])


@pytest.mark.slow
def test_the_page_refuses_an_embedder_whose_outputs_are_not_probabilities(browser, tmp_path):
    """MediaPipe's TextClassifier loads an embedder (metadata and tokenizer, no label file) and
    reports its embedding as scores; at the first text the page refuses it rather than show them as
    probabilities (the check is on that call's scores: the load time stays the load's alone)."""
    tf.keras.utils.set_random_seed(5)
    embedder, _ = export_tflite_embedder(AlbertModel(tiny(num_hidden_layers=1)), str(tmp_path), SPM_MODEL,
                                         seq_length=SEQ_LENGTH)
    with pytest.raises(RuntimeError, match=r"the page refused to classify: Cannot use model.tflite: its \d+ outputs "
                                           r"are not probabilities .*not a classifier \(an embedder\?\)\. It must be"):
        bench_browser.page_results(embedder, SENTENCES[:1])


@pytest.mark.slow
def test_the_page_cuts_a_huge_text_and_keeps_only_its_start_in_the_table(browser, exported):
    """A 4 MB text: classified as its first 10,000 characters (what MediaPipe Python says of those),
    and the table keeps 200 of them."""
    huge = SENTENCES[0] + " and so on" * 400_000
    [page] = bench_browser.page_results(exported["float32"], [huge])["results"]
    [python] = bench_browser.mediapipe_python_results(exported["float32"], [huge[:10_000]])["results"]
    np.testing.assert_allclose(page["scores"], python["scores"], rtol=0, atol=FLOAT_TOLERANCE)
    assert page["shown"] == huge[:200] + "…"


@pytest.mark.slow
def test_the_page_names_missing_webassembly_not_the_model(browser, exported, tmp_path, monkeypatch):
    """A half-installed node_modules (its WebAssembly files gone after the server started): the page
    says so and what to run, and does not blame the model."""
    serve = bench_browser._web_server()
    web = tmp_path / "web"
    for name in serve.served_files() + ["served_files.txt"]:
        (web / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(REPO, "web", name), web / name)
    monkeypatch.setattr(serve, "WEB_DIR", str(web))
    monkeypatch.setattr(serve, "SERVED_LIST", str(web / "served_files.txt"))
    with serve.serving(exported["float32"]) as url:
        for name in serve.served_files():
            if name.endswith(("_internal.js", "_internal.wasm")):
                os.remove(web / name)
        with pytest.raises(RuntimeError, match=r"the page did not load: Could not load MediaPipe's WebAssembly: "
                                               r"/node_modules/@mediapipe/tasks-text/wasm/text_wasm\w*_internal.js is "
                                               r"missing \(web/node_modules is half installed; run bash "
                                               r"web/install_browser.sh\)\.$"):
            bench_browser.page_results_at(url, SENTENCES[:1])
