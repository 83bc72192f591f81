"""A 4,096-position model from a shorter checkpoint: the extra position rows repeat the learned
ones, only when asked (`extend_positions`), and the load report says so."""

import numpy as np
import pytest

from albert_tf import AlbertConfig
from albert_tf.checkpoints import load, save_tf1_checkpoint
from albert_tf.checkpoints import save_huggingface_checkpoint, save_keras_hub_preset
from albert_tf.models.albert_model import AlbertModel
from albert_tf.checkpoints.position_rows import extend_position_table


def test_rows_past_the_table_repeat_it():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    extended = extend_position_table(table, 10)
    assert extended.shape == (10, 3)
    np.testing.assert_array_equal(extended[:4], table)
    np.testing.assert_array_equal(extended[4:8], table)
    np.testing.assert_array_equal(extended[8:], table[:2])


@pytest.mark.parametrize("table,length,message", [
    (np.zeros((4, 3)), 4, "fewer rows than the model's max_position_embeddings (4)"),
    (np.zeros((8, 3)), 4, "fewer rows"),
    (np.zeros(4), 8, "fewer rows"),
])
def test_a_table_not_shorter_is_refused(table, length, message):
    with pytest.raises(ValueError, match="extend_positions") as error:
        extend_position_table(table, length)
    assert message in str(error.value)
    with pytest.raises(ValueError, match="unknown mode 'interpolate'"):
        extend_position_table(np.zeros((2, 3)), 8, mode="interpolate")


def _config(positions):
    return AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=positions)


def test_load_extends_a_shorter_checkpoint_only_when_asked(tmp_path):
    short = AlbertModel(_config(32))
    prefix = str(tmp_path / "short" / "model.ckpt")
    save_tf1_checkpoint(short, prefix)
    long = AlbertModel(_config(80))
    with pytest.raises(ValueError, match='pass extend_positions="repeat"'):
        load(long, prefix)
    report = load(long, prefix, extend_positions="repeat")
    assert report.extended_positions == "32 -> 80 (repeat)"
    assert "position embeddings extended 32 -> 80 (repeat)" in str(report)
    learned = short.embeddings.position_embeddings.numpy()
    np.testing.assert_array_equal(long.embeddings.position_embeddings.numpy(), np.concatenate([learned] * 3)[:80])
    np.testing.assert_array_equal(long.embeddings.word_embeddings.numpy(), short.embeddings.word_embeddings.numpy())
    same_length = load(AlbertModel(_config(32)), prefix, extend_positions="repeat")
    assert same_length.extended_positions == ""  # nothing to extend: nothing said


@pytest.mark.parametrize("save", ["huggingface", "keras_hub"])
def test_load_extends_hugging_face_and_keras_hub_weights(tmp_path, save):
    write = save_huggingface_checkpoint if save == "huggingface" else save_keras_hub_preset
    short = AlbertModel(_config(32))
    write(short, str(tmp_path / save))
    long = AlbertModel(_config(80))
    with pytest.raises(ValueError, match="max_position_embeddings 32 .the model has 80."):
        load(long, str(tmp_path / save))
    report = load(long, str(tmp_path / save), extend_positions="repeat")
    assert report.extended_positions == "32 -> 80 (repeat)"
    learned = short.embeddings.position_embeddings.numpy()
    np.testing.assert_array_equal(long.embeddings.position_embeddings.numpy(), np.concatenate([learned] * 3)[:80])


@pytest.mark.parametrize("file_name", ["model.weights.h5", "model.keras"])
def test_load_extends_keras_files(tmp_path, file_name):
    short = AlbertModel(_config(32))
    path = str(tmp_path / file_name)
    short.save_weights(path) if file_name.endswith(".weights.h5") else short.save(path)
    long = AlbertModel(_config(80))
    report = load(long, path, extend_positions="repeat")
    assert report.extended_positions == "32 -> 80 (repeat)"
    learned = short.embeddings.position_embeddings.numpy()
    np.testing.assert_array_equal(long.embeddings.position_embeddings.numpy(), np.concatenate([learned] * 3)[:80])
    np.testing.assert_array_equal(long.embeddings.word_embeddings.numpy(), short.embeddings.word_embeddings.numpy())
