"""Block-sparse attention (BigBird's ITC pattern): the pattern, the math, masks, config, every model.

The equality with an independent implementation (Hugging Face's BigBird) is in
tests/test_parity_bigbird.py; here the layer is checked against a NumPy transcription of the
paper's figure: a [T, T] attention mask built block by block, and a dense softmax under it.
"""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainingModel
from albert_tf.layers.attention_mask import attention_bias
from albert_tf.layers.block_sparse_attention import BlockSparseAttention, draw_random_blocks, random_block_words
from albert_tf.models.albert_model import AlbertModel
from albert_tf.models.classifier_model import AlbertClassifier
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.models.question_answering_model import AlbertQuestionAnswering

BLOCK, RANDOM = 4, 2
SEQ = 64  # 16 blocks; block-sparse from (5 + 2 * 2) * 4 = 36 tokens up


def _config(**changes):
    values = dict(
        vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=24, max_position_embeddings=128, attention_type="block_sparse",
        block_size=BLOCK, num_random_blocks=RANDOM,
    )
    values.update(changes)
    return AlbertConfig(**values)


def _inputs(seq=SEQ, padding=13, seed=0):
    rng = np.random.default_rng(seed)
    inputs = {
        "input_word_ids": rng.integers(1, 40, (2, seq)).astype(np.int32),
        "input_mask": np.ones((2, seq), np.int32),
        "input_type_ids": np.zeros((2, seq), np.int32),
    }
    inputs["input_mask"][1, seq - padding:] = 0
    return inputs


def _allowed_random_blocks(num_blocks):
    """The paper's rule, row by row: a middle query block i draws among the blocks it does not
    already see: not the global first and last, not its window i-1, i, i+1."""
    return [set(range(1, num_blocks - 1)) - {i - 1, i, i + 1} for i in range(1, num_blocks - 1)]


def _numpy_attention_mask(num_blocks, random_blocks):
    """[nb, nb] 0/1: figure 1 of the paper (random + window + global) for one head."""
    sees = np.zeros((num_blocks, num_blocks), bool)
    sees[[0, -1], :] = True  # global rows
    sees[:, [0, -1]] = True  # global columns
    for i in range(1, num_blocks - 1):
        sees[i, i - 1:i + 2] = True
        sees[i, random_blocks[i - 1]] = True
    return sees


def _numpy_block_sparse(query, key, value, mask, pattern, scale):
    """Dense softmax under the paper's mask, padded keys excluded, padded query rows zero."""
    batch, heads, length, _ = query.shape
    context = np.zeros_like(query)
    for b in range(batch):
        for n in range(heads):
            sees = np.kron(_numpy_attention_mask(length // BLOCK, pattern[n]), np.ones((BLOCK, BLOCK), bool))
            sees &= mask[b][np.newaxis, :].astype(bool)
            scores = np.where(sees, query[b, n] @ key[b, n].T * scale, -np.inf)
            weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
            weights /= weights.sum(axis=-1, keepdims=True)
            context[b, n] = (weights @ value[b, n]) * mask[b][:, np.newaxis]
    return context


@pytest.mark.parametrize("num_blocks,num_random", [(9, 2), (16, 3), (64, 3), (12, 0)])
def test_random_blocks_follow_the_papers_rule(num_blocks, num_random):
    allowed = _allowed_random_blocks(num_blocks)
    drawn = draw_random_blocks(num_blocks, 4, num_random, seed=7).numpy()
    assert drawn.shape == (4, num_blocks - 2, num_random)
    for head in drawn:
        for row, blocks in enumerate(head):
            assert len(set(blocks)) == num_random and set(blocks) <= allowed[row], (row, blocks)
    np.testing.assert_array_equal(drawn, draw_random_blocks(tf.constant(num_blocks), 4, num_random, seed=7))
    if num_random:
        assert not np.array_equal(drawn, draw_random_blocks(num_blocks, 4, num_random, seed=8).numpy())
        assert not np.array_equal(drawn[0], drawn[1])  # each head its own pattern


def test_a_graph_of_unknown_length_draws_the_eager_pattern_for_every_block_count():
    """A SavedModel's or LiteRT model's graph knows the block count only when it runs: the same pattern."""
    graph = tf.function(lambda blocks: draw_random_blocks(blocks, 3, 2, seed=11),
                        input_signature=[tf.TensorSpec([], tf.int32)])
    for num_blocks in range(7, 33):
        np.testing.assert_array_equal(graph(tf.constant(num_blocks)), draw_random_blocks(num_blocks, 3, 2, seed=11))


def _lowbias32(words):
    """Wellons' lowbias32 on uint64 NumPy words kept to 32 bits: no wrap-around to trust."""
    low = np.uint64(0xFFFFFFFF)
    words = words.astype(np.uint64) & low
    words ^= words >> np.uint64(16)
    words = (words * np.uint64(0x7FEB352D)) & low
    words ^= words >> np.uint64(15)
    words = (words * np.uint64(0x846CA68B)) & low
    return words ^ (words >> np.uint64(16))


def test_the_words_are_lowbias32_of_seed_head_and_blocks():
    """The int32 arithmetic of `random_block_words` (products that wrap, shifts made logical) is the
    published unsigned hash, bit for bit (a seed past int32 too), and a row's words are distinct (no ties to break)."""
    num_blocks, heads, seed = 40, 3, 0xFFFFFFF0  # past int32: its low 32 bits
    head = np.arange(heads, dtype=np.uint64)[:, None, None]
    query_block = np.arange(1, num_blocks - 1, dtype=np.uint64)[None, :, None]
    key_block = np.arange(num_blocks, dtype=np.uint64)[None, None, :]
    expected = _lowbias32(_lowbias32(_lowbias32(head ^ np.uint64(seed)) + query_block) + key_block)
    words = np.asarray(random_block_words(num_blocks, heads, seed))
    np.testing.assert_array_equal(words, expected.astype(np.uint32).view(np.int32))
    assert all(len(set(row)) == num_blocks for head_words in words for row in head_words)


def test_random_blocks_are_uniform_over_the_allowed_blocks():
    """Over many seeds each allowed block of a row is drawn about equally often, the others never."""
    num_blocks, num_random, draws = 12, 3, 400
    counts = np.zeros((num_blocks - 2, num_blocks))
    for seed in range(draws // 4):
        for head in draw_random_blocks(num_blocks, 4, num_random, seed=seed).numpy():
            for row, blocks in enumerate(head):
                counts[row, blocks] += 1
    for row, allowed in enumerate(_allowed_random_blocks(num_blocks)):
        expected = draws * num_random / len(allowed)
        assert set(np.flatnonzero(counts[row])) == allowed
        assert np.all(np.abs(counts[row, sorted(allowed)] - expected) < 5 * np.sqrt(expected)), counts[row]


@pytest.mark.parametrize("pattern_kind", ["drawn", "explicit"])
def test_layer_equals_dense_softmax_under_the_papers_mask(pattern_kind):
    rng = np.random.default_rng(1)
    batch, heads, length, width = 2, 3, 48, 5
    query, key, value = (rng.normal(size=(batch, heads, length, width)).astype(np.float32) for _ in range(3))
    mask = np.ones((batch, length), np.int32)
    mask[1, 29:] = 0  # the last two blocks and part of one more are padding
    num_blocks = length // BLOCK
    explicit = draw_random_blocks(num_blocks, heads, RANDOM, seed=99).numpy() if pattern_kind == "explicit" else None
    layer = BlockSparseAttention(BLOCK, RANDOM, random_blocks=explicit, name="attention")
    pattern = draw_random_blocks(num_blocks, heads, RANDOM, layer.seed).numpy() if explicit is None else explicit

    def no_dense():
        raise AssertionError("48 tokens > 36: block-sparse must run")

    ours = layer(query, key, value, attention_bias(mask), scale=0.3, dense_attention=no_dense)
    expected = _numpy_block_sparse(query, key, value, mask, pattern, 0.3)
    np.testing.assert_allclose(ours.numpy(), expected, atol=1e-5)


def test_sequence_not_a_multiple_of_the_block_size_is_padded_to_one():
    """50 tokens run as 52 (13 blocks), the 2 added ones masked: as 52 tokens with 2 padded."""
    config = _config()
    model = AlbertModel(config)
    inputs = _inputs(seq=52, padding=0)
    inputs["input_mask"][:, 50:] = 0
    whole = model(inputs)["sequence_output"].numpy()
    cut = model({name: value[:, :50] for name, value in inputs.items()})["sequence_output"].numpy()
    np.testing.assert_allclose(cut, whole[:, :50], atol=1e-5)


def test_padded_tokens_do_not_reach_real_ones():
    """Changing the padded tokens' ids changes nothing at the real tokens, and a padded row in a
    batch gives what it gives alone."""
    model = AlbertModel(_config())
    inputs = _inputs()
    outputs = model(inputs)["sequence_output"].numpy()
    changed = {name: value.copy() for name, value in inputs.items()}
    changed["input_word_ids"][1, SEQ - 13:] = 3
    changed_outputs = model(changed)["sequence_output"].numpy()
    np.testing.assert_allclose(changed_outputs[1, :SEQ - 13], outputs[1, :SEQ - 13], atol=1e-6)
    alone = model({name: value[1:] for name, value in inputs.items()})["sequence_output"].numpy()
    np.testing.assert_allclose(alone[0, :SEQ - 13], outputs[1, :SEQ - 13], atol=1e-5)


def test_short_sequences_run_dense_and_say_so_once(caplog):
    config = _config()
    sparse = AlbertModel(config)
    dense = AlbertModel(config.replace(attention_type="dense", block_size=None, num_random_blocks=None))
    dense.set_weights(sparse.get_weights())
    inputs = _inputs(seq=36, padding=5)  # (5 + 2 * 2) * 4 = 36: not longer, so dense
    with caplog.at_level(logging.INFO, logger="absl"):
        first = sparse(inputs)["sequence_output"].numpy()
        sparse(inputs)
    said = [record for record in caplog.records if "dense attention" in record.getMessage()]
    assert len(said) == len(sparse.encoder.attention_layers) == 1  # once per sub-layer, not per call
    assert "36 tokens" in said[0].getMessage()
    np.testing.assert_allclose(first, dense(inputs)["sequence_output"].numpy(), atol=1e-6)
    longer = _inputs(seq=40, padding=5)
    assert np.max(np.abs(sparse(longer)["sequence_output"] - dense(longer)["sequence_output"])) > 1e-3


def test_saved_model_of_unknown_length_equals_eager(tmp_path):
    """A SavedModel whose signature has no fixed length: the choice dense/sparse is made in the
    graph, and the random blocks are the ones of eager calls."""
    model = AlbertModel(_config())
    spec = {name: tf.TensorSpec([None, None], tf.int32) for name in _inputs()}
    module = tf.Module()
    module.model = model
    module.serve = tf.function(lambda inputs: model(inputs)["sequence_output"], input_signature=[spec])
    tf.saved_model.save(module, str(tmp_path / "saved"))
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    for seq in (32, SEQ):
        inputs = _inputs(seq=seq, padding=3)
        np.testing.assert_allclose(loaded.serve(inputs).numpy(), model(inputs)["sequence_output"].numpy(), atol=1e-5)


def test_saved_and_reloaded_model_keeps_its_pattern(tmp_path):
    model = AlbertModel(_config())
    inputs = _inputs()
    path = str(tmp_path / "model.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    assert reloaded.config == model.config
    np.testing.assert_allclose(reloaded(inputs)["sequence_output"].numpy(),
                               model(inputs)["sequence_output"].numpy(), atol=1e-6)


@pytest.mark.parametrize(
    "changes",
    [dict(sharing="all"), dict(sharing="attention", num_hidden_groups=2), dict(sharing="ffn", inner_group_num=2),
     dict(sharing="none"), dict(num_random_blocks=0), dict(embedding_size=16)],
)
def test_every_sharing_mode_and_layout_runs(changes):
    model = AlbertModel(_config(**changes))
    outputs = model(_inputs())
    assert outputs["sequence_output"].shape == (2, SEQ, 16)
    assert len(outputs["encoder_outputs"]) == 2 * model.config.inner_group_num


def test_task_models_run_and_pretraining_rows_equal_the_sequence_output():
    config = _config()
    inputs = _inputs()
    positions = np.array([[0, 5, 40], [2, 17, 50]], np.int32)
    pretraining = AlbertPretrainingModel(config)
    outputs = pretraining({**inputs, "masked_lm_positions": positions})
    backbone_outputs = pretraining.albert({**inputs, "masked_lm_positions": positions})
    rows = tf.gather(outputs["sequence_output"], positions, batch_dims=1)
    np.testing.assert_allclose(backbone_outputs["masked_sequence_output"].numpy(), rows.numpy(), atol=1e-6)
    assert outputs["mlm_logits"].shape == (2, 3, config.vocab_size)
    assert AlbertClassifier(config, num_labels=3)(inputs)["logits"].shape == (2, 3)
    qa = AlbertQuestionAnswering(config)
    assert qa({**inputs, "p_mask": np.zeros((2, SEQ), np.int32)}) is not None
    choices = {name: np.stack([value, value], axis=1) for name, value in inputs.items()}
    assert AlbertMultipleChoice(config, num_choices=2)(choices).shape == (2, 2)


@pytest.mark.parametrize(
    "options,tolerance",
    [(dict(kernels="cpu"), 1e-5), (dict(kernels="cpu_inference"), 1e-5),
     (dict(dtype="mixed_bfloat16"), 0.1), (dict(dtype="mixed_float16"), 0.1)],
)
def test_kernel_sets_and_mixed_precision_give_the_reference_values(options, tolerance):
    config = _config()
    reference = AlbertModel(config)
    other = AlbertModel(config, **options)
    other.set_weights(reference.get_weights())
    inputs = _inputs()
    outputs = other(inputs)["sequence_output"]
    assert outputs.dtype == tf.float32
    np.testing.assert_allclose(outputs.numpy(), reference(inputs)["sequence_output"].numpy(), atol=tolerance)


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(attention_type="sparse"), "unknown `attention_type` 'sparse'"),
        (dict(attention_type="dense"), "apply only with `attention_type` \"block_sparse\""),
        (dict(block_size=None), "needs `block_size`, an integer >= 1"),
        (dict(num_random_blocks=-1), "needs `num_random_blocks`, an integer >= 0"),
        (dict(max_position_embeddings=36), "raise `max_position_embeddings`"),
    ],
)
def test_config_rejects_unusable_attention_settings(changes, message):
    with pytest.raises(ValueError, match="AlbertConfig") as error:
        _config(**changes)
    assert message in str(error.value)


def test_dense_configs_are_written_as_before():
    dense = AlbertConfig(vocab_size=10)
    assert not {"attention_type", "block_size", "num_random_blocks"} & set(dense.to_dict())
    sparse = _config()
    assert AlbertConfig.from_dict(sparse.to_dict()) == sparse
    assert sparse.to_dict()["attention_type"] == "block_sparse"
