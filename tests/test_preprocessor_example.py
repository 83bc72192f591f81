"""docs/fine_tuning.md's preprocessor example runs as printed: a tiny classifier fits on raw strings
through `ClassifierPreprocessor` and predicts raw text with the logits of the training features."""

import math
import os
import re

import numpy as np

from albert_tf.glue.examples import GlueExample
from albert_tf.glue.features import example_ids
from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import REPO, SPM_MODEL


def _example():
    with open(os.path.join(REPO, "docs", "fine_tuning.md"), encoding="utf-8") as handle:
        page = handle.read()
    section = page[page.index("## Raw text in Python: the preprocessor"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_preprocessor_example_fits_and_predicts_raw_text(monkeypatch):
    monkeypatch.chdir(REPO)  # the page's paths are the checkout's
    namespace = {}
    exec(compile(_example(), "docs/fine_tuning.md", "exec"), namespace)  # noqa: S102

    losses = namespace["history"].history["loss"]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    tokenizer = AlbertTokenizer(SPM_MODEL)
    rows = [example_ids(GlueExample("x", text, None, None), tokenizer, 32)[0]
            for text in ("what a wonderful film", "far too long")]
    ids = np.array([row + [0] * (32 - len(row)) for row in rows], np.int32)
    features = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32),
                "input_type_ids": np.zeros_like(ids)}
    np.testing.assert_allclose(namespace["logits"], namespace["model"].predict(features), atol=1e-5)
    assert namespace["logits"].shape == (2, 2)
