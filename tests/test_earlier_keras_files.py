"""Keras files that earlier versions saved load with the same weights and outputs: those of
`tests/data/earlier_keras_files`, written by commit dc9d135 (its `write_files.py` says how), from
before `AlbertPretrainingModel`, `AlbertMultipleChoice` and `AlbertQuestionAnswering` called their
backbone as one layer (which moved their weights in the files: `albert_tf/models/earlier_layouts.py`)."""

import os

import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_cli.cli import load_init_checkpoint
from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import load, tf1_variables
from albert_tf.models import load_model
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.models.question_answering_model import AlbertQuestionAnswering

FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "earlier_keras_files")
CONFIG = AlbertConfig.from_json_file(os.path.join(FILES, "albert_config.json"))
MODELS = {  # file name: (class, constructor arguments besides the config)
    "pretraining": (AlbertPretrainingModel, {}),
    "multiple_choice": (AlbertMultipleChoice, {"num_choices": 3}),
    "question_answering_v1": (AlbertQuestionAnswering, {"start_n_top": 3, "end_n_top": 2}),
    "question_answering_v2": (AlbertQuestionAnswering,
                              {"version_2_with_negative": True, "start_n_top": 3, "end_n_top": 2}),
}


def _saved(name):
    with np.load(os.path.join(FILES, f"{name}.npz"), allow_pickle=False) as arrays:
        return {kind: {key.partition(":")[2]: arrays[key] for key in arrays.files if key.startswith(kind + ":")}
                for kind in ("input", "output", "weight")}


def _assert_as_saved(model, name):
    """Every weight exactly as the earlier model's, and its outputs on the saved inputs."""
    saved = _saved(name)
    variables = tf1_variables(model)
    assert sorted(variables) == sorted(saved["weight"])
    for weight, value in saved["weight"].items():
        np.testing.assert_array_equal(variables[weight].numpy(), value, err_msg=weight)
    outputs = model(saved["input"], training=False)
    outputs = outputs if isinstance(outputs, dict) else {"logits": outputs}
    for output, value in saved["output"].items():
        np.testing.assert_allclose(outputs[output], value, rtol=1e-6, atol=1e-6, err_msg=output)


def _new(name):
    model_class, arguments = MODELS[name]
    model = model_class(CONFIG, **arguments)
    if hasattr(model, "example_inputs"):
        model(model.example_inputs())
    return model


@pytest.mark.parametrize("name", MODELS)
def test_the_files_hold_the_earlier_layout(name):
    """The fixtures are what the loading reads around: the backbone's weights at other paths."""
    with h5py.File(os.path.join(FILES, f"{name}.weights.h5"), "r") as handle:
        assert "layers/albert_model" not in handle
        assert ("layers/factorized_embedding" if name == "pretraining" else "albert/layers/factorized_embedding") in handle


@pytest.mark.parametrize("name", MODELS)
def test_keras_load_model_reads_an_earlier_keras_file(name):
    for restored in (keras.saving.load_model(os.path.join(FILES, f"{name}.keras")),
                     load_model(os.path.join(FILES, f"{name}.keras"), kernels="cpu")):
        assert type(restored) is MODELS[name][0] and restored.config == CONFIG
        _assert_as_saved(restored, name)


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
@pytest.mark.parametrize("name", MODELS)
def test_load_weights_reads_an_earlier_file(name, suffix):
    model = _new(name)
    model.load_weights(os.path.join(FILES, name + suffix))
    _assert_as_saved(model, name)


@pytest.mark.parametrize("name", MODELS)
def test_checkpoints_load_and_from_pretrained_read_an_earlier_keras_file(name):
    path = os.path.join(FILES, f"{name}.keras")
    model = _new(name)
    report = load(model, path)
    assert (report.format, report.missing, report.unused) == ("Keras file", (), ())
    _assert_as_saved(model, name)
    model_class, arguments = MODELS[name]
    _assert_as_saved(model_class.from_pretrained(path, **arguments), name)


def test_checkpoints_load_reads_an_earlier_pretraining_weights_file():
    model = AlbertPretrainingModel(CONFIG)
    report = load(model, os.path.join(FILES, "pretraining.weights.h5"))
    assert (report.missing, report.unused) == ((), ())
    _assert_as_saved(model, "pretraining")


@pytest.mark.parametrize("name", MODELS)
def test_init_checkpoint_takes_the_backbone_of_an_earlier_keras_file(name):
    backbone = AlbertModel(CONFIG)
    report = load_init_checkpoint(backbone, os.path.join(FILES, f"{name}.keras"))
    assert report.missing == () and report.other_heads
    saved = _saved(name)["weight"]
    for weight, variable in tf1_variables(backbone).items():
        np.testing.assert_array_equal(variable.numpy(), saved[weight], err_msg=weight)


def test_an_earlier_file_of_another_config_is_still_the_clear_error():
    other = AlbertPretrainingModel(CONFIG.replace(vocab_size=120))
    with pytest.raises(ValueError, match=r"pretraining.weights.h5 does not fit AlbertPretrainingModel of this config"):
        load(other, os.path.join(FILES, "pretraining.weights.h5"))


def test_a_backbone_file_is_not_read_as_an_earlier_pretraining_file(tmp_path):
    """A backbone's file has the backbone's groups where the earlier pretraining files had them, but
    no heads: loading it into a pretraining model fails as before, on the backbone's layers."""
    path = str(tmp_path / "backbone.weights.h5")
    AlbertModel(CONFIG).save_weights(path)
    with pytest.raises(ValueError, match="object <FactorizedEmbedding name=embeddings"):
        AlbertPretrainingModel(CONFIG).load_weights(path)


def test_a_squad_checkpoint_of_the_subclassed_model_restores_and_loads():
    """Resuming (`assert_existing_objects_matched`, as fine-tuning restores) and `load` (an
    `--init_checkpoint`) take every weight of a checkpoint the subclassed SQuAD model wrote."""
    prefix = os.path.join(FILES, "question_answering_v2_checkpoint", "ckpt")
    resumed = _new("question_answering_v2")
    tf.train.Checkpoint(model=resumed).read(prefix).assert_existing_objects_matched()
    _assert_as_saved(resumed, "question_answering_v2")
    loaded = _new("question_answering_v2")
    report = load(loaded, prefix)
    assert (report.format, report.missing, report.unused) == ("TF2 checkpoint", (), ())
    _assert_as_saved(loaded, "question_answering_v2")
