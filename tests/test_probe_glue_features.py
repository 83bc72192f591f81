"""bench/probe_glue_features.py: frozen-encoder features and their linear probes."""

import numpy as np
import pytest

from glue_test_data import TINY_CONFIG, load_bench_script

from albert_tf.config import AlbertConfig
from albert_tf.glue.tasks import get_task
from albert_tf.models.albert_model import AlbertModel

probe = load_bench_script("probe_glue_features")


@pytest.fixture(scope="module")
def backbone():
    return AlbertModel(AlbertConfig.from_json_file(TINY_CONFIG))


def _batch(rows, length):
    """One (features, labels) batch as `make_dataset` pads it: rows of ids, padded to `length`."""
    ids = np.zeros((len(rows), length), np.int32)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = row
    return {"input_word_ids": ids, "input_mask": (ids != 0).astype(np.int32), "input_type_ids": np.zeros_like(ids)}, \
        np.arange(len(rows))


def test_features_do_not_depend_on_the_padding_of_the_batch(backbone):
    short, long = [2, 100, 3], [2, 200, 201, 202, 203, 3]
    alone, alone_labels = probe.encode(backbone, [_batch([short], 3)])
    padded, padded_labels = probe.encode(backbone, [_batch([short, long], 8)])
    whole = backbone(_batch([short], 3)[0])
    np.testing.assert_allclose(alone["token_mean"][0], np.asarray(whole["sequence_output"])[0].mean(0), atol=1e-5)
    for name in probe.FEATURES:
        np.testing.assert_allclose(padded[name][0], alone[name][0], atol=1e-5)
    assert list(alone_labels) == [0] and list(padded_labels) == [0, 1]


def test_probe_scores_separable_features_perfectly():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    features = {name: np.c_[labels * 4.0 + rng.normal(size=200), rng.normal(size=(200, 3))] for name in probe.FEATURES}
    scores = probe.probe_scores((features, labels), (features, labels), get_task("SST-2"))
    assert all(scores[name]["accuracy"] > 0.95 for name in probe.FEATURES)


def test_pooled_spread_counts_saturated_units_and_mean_cosine_between_rows():
    pooled = np.array([[1.0, 0.0], [0.0, 0.995], [1.0, 0.0]])
    saturated, cosine = probe.pooled_spread(pooled)
    assert saturated == pytest.approx(0.5)  # 3 of the 6 units are beyond ±0.99
    assert cosine == pytest.approx(2 / 6)  # of the 6 ordered pairs, only rows 0 and 2 (twice) agree


def test_position_row_norms_split_at_the_length(backbone):
    table = backbone.embeddings.position_embeddings
    original = np.asarray(table)
    try:
        rows = np.zeros_like(original)
        rows[:4, 0] = 3.0
        rows[4:, 1] = 0.5
        table.assign(rows)
        assert probe.position_row_norms(backbone, 4) == (pytest.approx(3.0), pytest.approx(0.5))
        below, beyond = probe.position_row_norms(backbone, len(rows))
        assert below == pytest.approx(np.linalg.norm(rows, axis=1).mean()) and np.isnan(beyond)
    finally:
        table.assign(original)
