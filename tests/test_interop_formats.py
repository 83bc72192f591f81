"""`albert_tf.checkpoints.formats`: one entry point that recognises HF and keras-hub directories, and
`init_from_group0` for them (a 2-group model from a 1-group checkpoint computes the same function)."""

import os

import keras_hub
import numpy as np

import script_process
import test_parity_huggingface as parity
from albert_tf import AlbertClassifier, AlbertConfig, AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import load, load_foreign, save_tf1_checkpoint
from albert_tf.checkpoints import formats
from albert_tf.checkpoints.keras_hub import save_keras_hub_preset

CONFIG = parity._grouped_config().replace(num_hidden_groups=1, inner_group_num=1)


def _model_keys(config):
    return {key: getattr(config, key) for key in config.model_keys()}


def test_formats_are_recognised_and_tf1_is_left_to_the_caller(tmp_path):
    parity._hf_model(CONFIG, seed=3).save_pretrained(tmp_path / "hf")
    keras_hub.models.AlbertBackbone(
        vocabulary_size=CONFIG.vocab_size, num_layers=4, num_heads=2, embedding_dim=64, hidden_dim=128,
        intermediate_dim=512, max_sequence_length=CONFIG.max_position_embeddings,
    ).save_to_preset(tmp_path / "preset")
    save_tf1_checkpoint(AlbertModel(CONFIG), str(tmp_path / "tf1" / "model.ckpt-1"))

    assert formats.foreign_format(tmp_path / "hf") == formats.HUGGING_FACE
    assert formats.foreign_format(tmp_path / "preset") == formats.KERAS_HUB
    assert formats.foreign_format(tmp_path / "tf1") is None
    assert _model_keys(formats.foreign_config(tmp_path / "hf")) == _model_keys(CONFIG)
    assert _model_keys(formats.foreign_config(tmp_path / "preset")) == _model_keys(CONFIG)
    assert load_foreign(AlbertModel(CONFIG), tmp_path / "tf1") is None
    assert len(load_foreign(AlbertModel(CONFIG), tmp_path / "preset").loaded) == 25
    assert len(load_foreign(AlbertPretrainingModel(CONFIG), tmp_path / "hf").loaded) == 32

    # One call reads config and weights from each directory, for every model class.
    CONFIG.to_json_file(str(tmp_path / "tf1" / "albert_config.json"))  # as in a released tarball
    from albert_tf.models import AlbertMultipleChoice, AlbertQuestionAnswering  # pylint: disable=g-import-not-at-top

    for make, directory, loaded in ((AlbertPretrainingModel.from_pretrained, "hf", 32),
                                    (AlbertModel.from_pretrained, "preset", 25),
                                    (lambda path: AlbertClassifier.from_pretrained(path, num_labels=3), "tf1", 25),
                                    (AlbertQuestionAnswering.from_pretrained, "hf", 25),
                                    (AlbertMultipleChoice.from_pretrained, "preset", 25)):
        model = make(str(tmp_path / directory))
        assert _model_keys(model.config) == _model_keys(CONFIG) and len(model.load_report.loaded) == loaded, directory


def test_init_from_group0_copies_group_0_into_every_group(tmp_path):
    hf_model = parity._hf_model(CONFIG, seed=3)
    hf_model.save_pretrained(tmp_path)
    model = AlbertPretrainingModel(CONFIG.replace(num_hidden_groups=2))
    report = load_foreign(model, tmp_path, init_from_group0=True)
    assert report.missing == () and len(report.sources) == 16
    assert all(source.startswith("bert/encoder/transformer/group_0/") for source in report.sources.values())
    inputs = parity._inputs(CONFIG.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs),
                          "HF G=1 -> ours G=2 (init_from_group0)")


def test_the_one_loader_reads_both_and_a_classifier_takes_the_backbone(tmp_path):
    """`checkpoints.load` (behind every --init_checkpoint) recognises HF and keras-hub directories."""
    hf_model = parity._hf_model(CONFIG, seed=4)
    hf_model.save_pretrained(tmp_path / "hf")
    model = AlbertPretrainingModel(CONFIG)
    report = load(model, tmp_path / "hf")
    assert report.format == "Hugging Face checkpoint" and len(report.loaded) == 32
    inputs = parity._inputs(CONFIG.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs), "load(HF dir)")
    classifier = AlbertClassifier(CONFIG, num_labels=3)
    report = load(classifier, tmp_path / "hf")  # the pretraining heads unused, the new head missing: allowed
    assert len(report.loaded) == 25
    save_keras_hub_preset(model.albert, tmp_path / "preset")
    backbone = AlbertModel(CONFIG)
    assert load(backbone, tmp_path / "preset").format == "keras-hub preset"
    for ours, theirs in zip(backbone.weights, model.albert.weights):
        np.testing.assert_array_equal(ours, theirs)


def test_scripts_take_the_config_of_a_hugging_face_init_checkpoint(tmp_path):
    """No --albert_config_file: export_encoder.py (as run_classifier.py, run_pretraining.py,
    run_squad.py and run_race.py) builds the model from the HF directory's own config.json."""
    from albert_tf.checkpoints.huggingface import save_huggingface_checkpoint

    config = AlbertConfig.from_json_file(os.path.join(parity.REPO, "configs", "albert_tiny.json")).replace(
        intermediate_size=256)  # the bundled default (512) would not fit these weights
    save_huggingface_checkpoint(AlbertModel(config), tmp_path / "hf")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")

    def export(*args):
        return script_process.run_python([os.path.join(parity.REPO, "export_encoder.py"),
                                          f"--init_checkpoint={tmp_path / 'hf'}", *args], cwd=tmp_path, env=env)

    result = export(f"--export_dir={tmp_path / 'hub'}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(os.listdir(tmp_path / "hub")) == ["encoder", "preprocessing"]
    given = export(f"--export_dir={tmp_path / 'hub2'}",
                   f"--albert_config_file={os.path.join(parity.REPO, 'configs', 'albert_tiny.json')}")
    assert given.returncode == 2 and "intermediate_size 256 (the model has 512)" in given.stderr  # the given file wins


def test_fine_tuning_takes_the_config_beside_init_checkpoint(tmp_path):
    """A released tarball's or our run's `albert_config.json` is found without --albert_config_file."""
    from absl import flags  # pylint: disable=g-import-not-at-top

    from albert_cli.task_config import given_config_file  # pylint: disable=g-import-not-at-top
    from albert_tf.tasks.model_inputs import model_config  # pylint: disable=g-import-not-at-top

    flag_values = flags.FlagValues()
    flags.DEFINE_string("albert_config_file", os.path.join(parity.REPO, "configs", "albert_tiny.json"), "",
                        flag_values=flag_values)
    flags.DEFINE_string("init_checkpoint", None, "", flag_values=flag_values)
    CONFIG.to_json_file(str(tmp_path / "albert_config.json"))
    flag_values(["run", f"--init_checkpoint={tmp_path / 'model.ckpt-best'}"])
    assert _model_keys(model_config(given_config_file(flag_values), flag_values.init_checkpoint)) == _model_keys(CONFIG)
