"""keras-hub `AlbertBackbone` presets in and out, with keras-hub as the oracle.

Both models use the tanh GELU and LayerNorm epsilon 1e-12, so outputs agree to float32 rounding:
the tolerance is the HF tests' 1e-5 (absolute).
"""

import json
import os

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

import test_parity_huggingface as parity
from test_folded_sentencepiece import dev_texts
from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import CheckpointMismatchError
from albert_tf.checkpoints.keras_hub import (
    albert_config_from_keras_hub,
    is_keras_hub_preset,
    keras_hub_spm_model_file,
    save_keras_hub_preset,
)
from albert_tf.checkpoints.loading import load_keras_hub
from albert_tf.text.tokenization import AlbertTokenizer

SPM_MODEL = os.path.join(parity.REPO, "data", "albert_spm", "30k-clean.model")
OUTPUTS = ("sequence_output", "pooled_output")


def _config(**changes):
    values = dict(vocab_size=30000, embedding_size=32, hidden_size=64, num_hidden_layers=4, num_hidden_groups=2,
                  num_attention_heads=4, intermediate_size=128, inner_group_num=2, max_position_embeddings=64)
    values.update(changes)
    return AlbertConfig(**values)


def _backbone(config):
    return keras_hub.models.AlbertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, embedding_dim=config.embedding_size,
        hidden_dim=config.hidden_size, intermediate_dim=config.intermediate_size,
        num_groups=config.num_hidden_groups, num_inner_repetitions=config.inner_group_num,
        max_sequence_length=config.max_position_embeddings,
    )


def _randomize(model, seed):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(parity._random_value(variable.path, tuple(variable.shape), rng).astype(np.float32))
    return model


def _assert_same_outputs(albert, backbone, label):
    inputs = parity._inputs(albert.config.vocab_size)
    ours = albert({name: tf.constant(inputs[name]) for name in ("input_word_ids", "input_mask", "input_type_ids")})
    theirs = backbone({"token_ids": inputs["input_word_ids"], "segment_ids": inputs["input_type_ids"],
                       "padding_mask": inputs["input_mask"]})
    parity._assert_parity({name: ours[name].numpy() for name in OUTPUTS},
                          {name: np.asarray(theirs[name]) for name in OUTPUTS}, label)


def test_keras_hub_preset_loads_with_equal_outputs(tmp_path):
    backbone = _randomize(_backbone(_config()), seed=1)
    backbone.save_to_preset(tmp_path)
    keras_hub.models.AlbertTokenizer(proto=SPM_MODEL).save_to_preset(tmp_path)
    assert is_keras_hub_preset(tmp_path)

    albert = AlbertModel(albert_config_from_keras_hub(tmp_path))
    report = load_keras_hub(albert, tmp_path)
    assert (report.missing, report.unused, report.skipped) == ((), (), ())
    assert len(report.loaded) == len(albert.weights)
    _assert_same_outputs(albert, backbone, "keras-hub -> ours, L=4 G=2 K=2")
    with open(keras_hub_spm_model_file(tmp_path), "rb") as asset, open(SPM_MODEL, "rb") as original:
        assert asset.read() == original.read()


def test_ours_to_keras_hub_loads_with_equal_outputs(tmp_path):
    model = _randomize(AlbertPretrainingModel(_config()), seed=2)
    with pytest.raises(ValueError, match="the heads of AlbertPretrainingModel would be left out: pass backbone_only=True"):
        save_keras_hub_preset(model, tmp_path / "preset", spm_model_file=SPM_MODEL)
    assert not os.path.exists(tmp_path / "preset")
    save_keras_hub_preset(model, tmp_path / "preset", spm_model_file=SPM_MODEL, backbone_only=True)
    backbone = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    _assert_same_outputs(model.albert, backbone, "ours -> keras-hub, L=4 G=2 K=2")


# Cased and accented text (no digit before a comma: our digit-comma rule is the one difference, see
# `folded_sentencepiece`), and the texts of the bundled SST-2 and MRPC dev sets.
CASED_AND_ACCENTED = ["The cat sat on the mat.", "How do you spell CLICHÉ? Naïveté, Maelström  Ångström",
                      "Crème Brûlée at the Café de Flore", "ﬁne ① a\u00a0b", "e\u0301te\u0301 ÀÉÎÕÜ"]


def test_the_preset_tokenizer_gives_our_ids_on_cased_and_accented_text(tmp_path):

    save_keras_hub_preset(AlbertModel(_config()), tmp_path / "preset", spm_model_file=SPM_MODEL)
    theirs = keras_hub.models.AlbertTokenizer.from_preset(str(tmp_path / "preset"))
    ours = AlbertTokenizer(SPM_MODEL)
    texts = CASED_AND_ACCENTED + [text for text in dev_texts(("SST-2", "MRPC"))
                                  if not any(a.isdigit() and b == "," for a, b in zip(text, text[1:]))]
    assert len(texts) > 2000 and theirs.vocabulary_size() == ours.vocab_size
    expected = [ours.encode(text) for text in texts]
    assert theirs(texts) == expected  # a ragged batch comes back as lists
    assert expected[0][0] == 14 and 1 not in expected[1]  # "▁the", no <unk> for capitals or accents
    # Our tokenizer on the preset's asset (a preset read back) still gives the training ids.
    assert [AlbertTokenizer(keras_hub_spm_model_file(tmp_path / "preset")).encode(t) for t in texts] == expected


def test_unshared_model_is_one_group_per_layer(tmp_path):
    albert = _randomize(AlbertModel(_config(num_hidden_groups=1, inner_group_num=1, sharing="none")), seed=3)
    save_keras_hub_preset(albert, tmp_path / "preset")
    backbone = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    assert backbone.num_groups == 4
    _assert_same_outputs(albert, backbone, "ours(none) -> keras-hub(groups = L)")
    again = AlbertModel(albert.config)
    load_keras_hub(again, tmp_path / "preset")
    for ours, theirs in zip(albert.weights, again.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_pretraining_model_needs_its_heads_allowed_missing(tmp_path):
    _backbone(_config()).save_to_preset(tmp_path)
    model = AlbertPretrainingModel(_config())
    with pytest.raises(CheckpointMismatchError, match=r"model\.weights\.h5 does not match.*cls/predictions"):
        load_keras_hub(model, tmp_path)
    report = load_keras_hub(model, tmp_path, allow_missing=("cls/*",))
    assert len(report.missing) == 7


def test_learned_projection_with_equal_sizes_is_refused(tmp_path):
    _backbone(_config(embedding_size=64)).save_to_preset(tmp_path)
    with pytest.raises(ValueError, match=r"model\.weights\.h5 has a learned embedding_projection/kernel"):
        load_keras_hub(AlbertModel(_config(embedding_size=64)), tmp_path)


def test_another_class_or_architecture_is_refused(tmp_path):
    _backbone(_config()).save_to_preset(tmp_path)
    with pytest.raises(ValueError, match=r"config\.json describes another ALBERT.*num_attention_heads 4 \(the model has 2\)"):
        load_keras_hub(AlbertModel(_config(num_attention_heads=2)), tmp_path)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "class_name": "BertBackbone"}))
    with pytest.raises(ValueError, match=r"config\.json: `class_name` is 'BertBackbone', expected 'AlbertBackbone'"):
        load_keras_hub(AlbertModel(_config()), tmp_path)


def test_writing_refuses_partial_sharing_and_a_used_directory(tmp_path):
    with pytest.raises(ValueError, match="sharing='ffn' cannot be stored"):
        save_keras_hub_preset(AlbertModel(_config(sharing="ffn")), tmp_path / "preset")
    assert not os.path.exists(tmp_path / "preset")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("keep")
    with pytest.raises(ValueError, match="used exists and is not an empty directory"):
        save_keras_hub_preset(AlbertModel(_config()), tmp_path / "used")


@pytest.mark.parametrize("removed", ["model.weights.h5", "config.json"])
def test_a_preset_missing_a_file_is_named_as_a_preset_missing_it(tmp_path, removed):
    from albert_tf.checkpoints.formats import read_config

    _backbone(_config()).save_to_preset(tmp_path)
    os.remove(tmp_path / removed)
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}: a keras-hub preset without its {removed}; copy the "
                                                "whole preset directory"):
        read_config(str(tmp_path))
