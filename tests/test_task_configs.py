"""albert_tf.tasks' configs: the commands' flags under the same names and defaults, checked when made
(the error names the field, and the command's one-line error its flag), saved as JSON and back."""

import json
import subprocess
import sys

import pytest

from albert_tf.error_text import SettingError
from albert_tf.tasks import ClassifierConfig, ConfigError, RaceConfig, SquadConfig

# The fields whose command default is a bundled file: None in the library (see albert_tf/tasks/config.py).
BUNDLED_DEFAULTS = {"spm_model_file", "albert_config_file", "data_dir"}

DEFAULTS_OF_FLAGS = r"""
import dataclasses, importlib, json, sys
from absl import flags
importlib.import_module(sys.argv[1])
config_class = getattr(importlib.import_module("albert_tf.tasks"), sys.argv[2])
print(json.dumps({f.name: [f.name in flags.FLAGS, flags.FLAGS[f.name].default if f.name in flags.FLAGS else None,
                           f.default] for f in dataclasses.fields(config_class)}))
"""


@pytest.mark.parametrize("module, config_class", [("albert_cli.classify", "ClassifierConfig"),
                                                  ("albert_cli.squad", "SquadConfig"),
                                                  ("albert_cli.race", "RaceConfig")])
def test_every_field_is_a_flag_of_the_command_with_its_default(module, config_class):
    found = json.loads(subprocess.run([sys.executable, "-c", DEFAULTS_OF_FLAGS, module, config_class], check=True,
                                      capture_output=True, text=True).stdout)
    assert [name for name, (is_flag, _, _) in found.items() if not is_flag] == []
    differ = {name: (flag, field) for name, (_, flag, field) in found.items()
              if flag != field and name not in BUNDLED_DEFAULTS}
    assert differ == {}
    assert all(found[name][2] is None for name in BUNDLED_DEFAULTS if name in found)


def test_a_config_round_trips_through_json():
    config = ClassifierConfig(train_file="reviews.csv", label_names=["neg", "pos"], do_train=True, seeds=2)
    text = json.dumps(config.to_dict())
    assert ClassifierConfig.from_dict(json.loads(text)) == config
    assert SquadConfig.from_dict(SquadConfig(do_predict=True, predict_file="dev.json").to_dict()).predict_file == \
        "dev.json"


def test_an_unknown_key_is_refused_by_name():
    with pytest.raises(ConfigError, match="'train_steps': not a setting of ClassifierConfig") as caught:
        ClassifierConfig.from_dict({"train_steps": 3})
    assert caught.value.field == "train_steps"


@pytest.mark.parametrize("make, field, text, flag_text", [
    (lambda: ClassifierConfig(learning_rate=float("inf")), "learning_rate",
     "learning_rate must be a finite number > 0, got inf", "--learning_rate must be a finite number > 0, got inf"),
    (lambda: ClassifierConfig(optimizer="sgd"), "optimizer", "optimizer: expected one of lamb, adamw, got 'sgd'",
     "--optimizer: expected one of lamb, adamw, got 'sgd'"),
    (lambda: ClassifierConfig(train_step=0), "train_step", "train_step must be positive, got 0",
     "--train_step must be positive, got 0"),
    (lambda: RaceConfig(do_eval=True, data_dir=".", warmup_step=-1), "warmup_step", "warmup_step must be >= 0, got -1",
     "--warmup_step must be >= 0, got -1"),
    (lambda: SquadConfig(do_predict=True, predict_file="d.json", n_best_size=0), "n_best_size",
     "n_best_size must be positive, got 0", "--n_best_size must be positive, got 0"),
    (lambda: ClassifierConfig(seed=2**32 - 2, seeds=3), "seeds",
     f"seed {2**32 - 2} with seeds 3 reaches seed {2**32}", f"--seed {2**32 - 2} with --seeds 3 reaches seed"),
    (lambda: ClassifierConfig(dev_file="dev.csv", do_train=True), "do_train", "do_train: give train_file",
     "--do_train: give --train_file"),
    (lambda: ClassifierConfig(export_serving_tflite="float32"), "export_serving_tflite",
     "export_serving_tflite writes into the SavedModel of export_dir", "give --export_dir too"),
    (lambda: SquadConfig(do_predict=True), "predict_file", "do_predict needs predict_file",
     "--do_predict needs --predict_file (the questions to answer)"),
    (lambda: SquadConfig(do_predict=True, predict_file="d.json", max_query_length=400), "max_seq_length",
     "max_seq_length 384 leaves no room", "--max_seq_length 384 leaves no room for the paragraph after "
     "--max_query_length 400"),
    (lambda: RaceConfig(), "do_train", "nothing to do", "--do_train, --do_eval, --do_predict, --export_dir"),
    (lambda: RaceConfig(do_eval=True, data_dir=".", high_only=True, middle_only=True), "high_only",
     "high_only and middle_only exclude each other", "--high_only and --middle_only exclude each other"),
])
def test_a_bad_field_is_one_error_naming_it(make, field, text, flag_text):
    with pytest.raises(ConfigError) as caught:
        make()
    error = caught.value
    assert isinstance(error, (SettingError, ValueError)) and error.field == field
    assert text in str(error)
    assert flag_text in error.worded(lambda name: f"--{name}")


def test_a_library_error_about_a_field_keeps_the_settings_it_names():
    from albert_tf.error_text import SettingError
    from albert_tf.tasks.config_error import checked

    with pytest.raises(ConfigError) as caught:
        with checked("export_tflite", "; its SavedModel ({export_dir}) serves it"):
            raise SettingError("{task_name}: {name} has two texts", name="MRPC")
    assert caught.value.field == "export_tflite"
    assert str(caught.value) == "export_tflite: task_name: MRPC has two texts; its SavedModel (export_dir) serves it"
    assert caught.value.worded(lambda name: f"--{name}") == \
        "--export_tflite: --task_name: MRPC has two texts; its SavedModel (--export_dir) serves it"


def test_the_command_maps_its_flags_to_the_config():
    mapped = subprocess.run([sys.executable, "-c", r"""
import json
from albert_cli import classify
from albert_cli.task_config import config_from_flags
from albert_tf.tasks import ClassifierConfig
classify.FLAGS(["albert-classify", "--train_file=a.csv", "--label_names=neg,pos", "--do_train", "--seeds=2"])
first = config_from_flags(ClassifierConfig, classify.FLAGS)
classify.FLAGS.unparse_flags()
classify.FLAGS(["albert-classify", "--init_checkpoint=ckpt", "--do_eval"])
second = config_from_flags(ClassifierConfig, classify.FLAGS)
print(json.dumps([first.to_dict(), second.albert_config_file, second.spm_model_file is not None]))
"""], check=True, capture_output=True, text=True).stdout
    first, config_file, spm_given = json.loads(mapped)
    assert first["train_file"] == "a.csv" and first["label_names"] == ["neg", "pos"] and first["seeds"] == 2
    assert first["do_train"] and first["albert_config_file"].endswith("albert_tiny.json")
    assert config_file is None and spm_given  # the config --init_checkpoint carries
