"""Converts ALBERT weights between formats: Hugging Face, keras-hub presets and the original's TF1.

    albert-convert --from=albert-base-v2 --to=out/albert_base --format=tf1

(`python -m albert_tf.convert ...` in a checkout.) The input format is recognised (an HF directory, a keras-hub preset, or a TF1 checkpoint with
`--albert_config_file`, by default the `albert_config.json` beside it); the model it holds
(backbone, pretraining heads or a classifier) is loaded strictly and written in `--format`. The
SentencePiece model travels along when the input has one.
"""

import glob
import os
import shutil

from absl import flags

from albert_cli.cli import UsageError, require, run_main
from albert_tf.io_utils import atomic_directory

FORMATS = ("hf", "keras_hub", "tf1")
TF1_CONFIG_NAME = "albert_config.json"
# An HF `AlbertForMaskedLM` checkpoint (most hub ALBERTs) may lack the sentence-order head and the
# pooler: they start from their initializers (the report lists them as missing).
NOT_IN_MASKED_LM = ("cls/seq_relationship/*", "bert/pooler/*")

FLAGS = flags.FLAGS
flags.DEFINE_string("from", None, "Input: an HF checkpoint directory, a keras-hub preset or a TF1 checkpoint.")
flags.DEFINE_string("to", None, "Output directory (created; must not hold files).")
flags.DEFINE_enum("format", None, FORMATS, "Output format.")
flags.DEFINE_string("albert_config_file", None, f"TF1 input only: its config (default: {TF1_CONFIG_NAME} beside it).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model to write along (default: the input's own).")
flags.DEFINE_bool("do_lower_case", True, "HF output: the tokenizer lowercases (the English models are uncased).")
flags.DEFINE_bool("erf_gelu_as_tanh", False, "HF input: read hidden_act 'gelu' (erf) as the original's tanh GELU.")


def _model_for_heads(config, names, classifier_rows):
    """The model class that holds the weights named `names` (TF1 names), built from `config`."""
    from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel  # pylint: disable=g-import-not-at-top

    if classifier_rows is not None:
        return AlbertClassifier(config, num_labels=classifier_rows)
    if any(name.startswith("cls/") for name in names):
        return AlbertPretrainingModel(config)
    return AlbertModel(config)


def _tf1_names(table, foreign_names):
    return [translated[0] for translated in map(table.to_tf1, foreign_names) if translated]


def _read_huggingface(path):
    from albert_tf.interop import huggingface  # pylint: disable=g-import-not-at-top

    config = huggingface.albert_config_from_huggingface(path, FLAGS.erf_gelu_as_tanh)
    shapes = huggingface.huggingface_weight_shapes(path)
    rows = shapes["classifier.weight"][0] if "classifier.weight" in shapes else None
    model = _model_for_heads(config, _tf1_names(huggingface.NAMES, shapes), rows)
    report = huggingface.load_huggingface(model, path, allow_missing=NOT_IN_MASKED_LM,
                                          erf_gelu_as_tanh=FLAGS.erf_gelu_as_tanh)
    spm = os.path.join(path, huggingface.SPM_NAME)
    return model, report, spm if os.path.isfile(spm) else None


def _read_keras_hub(path):
    from albert_tf.interop import keras_hub  # pylint: disable=g-import-not-at-top
    from albert_tf.models import AlbertModel  # pylint: disable=g-import-not-at-top

    model = AlbertModel(keras_hub.albert_config_from_keras_hub(path))
    return model, keras_hub.load_keras_hub(model, path), keras_hub.keras_hub_spm_model_file(path)


def _read_tf1(path):
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from albert_tf.checkpoint_names import HUB_MODULE_PREFIX  # pylint: disable=g-import-not-at-top
    from albert_tf.checkpoints import load, resolve_checkpoint_prefix  # pylint: disable=g-import-not-at-top
    from albert_tf.config import AlbertConfig  # pylint: disable=g-import-not-at-top

    prefix = resolve_checkpoint_prefix(path)
    directory = path if os.path.isdir(path) else os.path.dirname(prefix)
    config_file = FLAGS.albert_config_file or os.path.join(directory, TF1_CONFIG_NAME)
    if not os.path.isfile(config_file):
        raise FileNotFoundError(f"{config_file} does not exist; pass the checkpoint's config as --albert_config_file.")
    config = AlbertConfig.from_json_file(config_file)
    shapes = {name.removeprefix(HUB_MODULE_PREFIX): shape for name, shape in tf.train.list_variables(prefix)}
    rows = shapes["output_weights"][0] if "output_weights" in shapes else None
    model = _model_for_heads(config, shapes, rows)
    report = load(model, prefix)  # a head the file lacks stays new (see checkpoints.load)
    spm_files = glob.glob(os.path.join(directory, "*.model"))
    return model, report, spm_files[0] if len(spm_files) == 1 else None


def read_any(path):
    """(model, load report, SentencePiece model or None) from an HF, keras-hub or TF1 input."""
    from albert_tf.interop import formats  # pylint: disable=g-import-not-at-top

    found = formats.foreign_format(path)
    if found == formats.HUGGING_FACE:
        return _read_huggingface(path)
    if found == formats.KERAS_HUB:
        return _read_keras_hub(path)
    return _read_tf1(path)


def write(model, directory, output_format, spm_model_file):
    """Writes `model` to `directory` in `output_format`; returns what was left out, if anything."""
    from albert_tf.checkpoint_formats import RELEASED_CHECKPOINT_NAME  # pylint: disable=g-import-not-at-top
    from albert_tf.checkpoints import save_tf1_checkpoint  # pylint: disable=g-import-not-at-top
    from albert_tf.interop.huggingface import save_huggingface_checkpoint  # pylint: disable=g-import-not-at-top
    from albert_tf.interop.keras_hub import save_keras_hub_preset  # pylint: disable=g-import-not-at-top
    from albert_tf.models import AlbertModel  # pylint: disable=g-import-not-at-top

    if output_format == "hf":
        save_huggingface_checkpoint(model, directory, spm_model_file, do_lower_case=FLAGS.do_lower_case)
    elif output_format == "keras_hub":
        save_keras_hub_preset(model, directory, spm_model_file)
        if not isinstance(model, AlbertModel):
            return f"the {type(model).__name__} heads (a keras-hub preset holds the backbone only)"
    else:
        save_tf1_checkpoint(model, os.path.join(directory, RELEASED_CHECKPOINT_NAME))
        model.config.to_json_file(os.path.join(directory, TF1_CONFIG_NAME))
        if spm_model_file:
            shutil.copyfile(spm_model_file, os.path.join(directory, os.path.basename(spm_model_file)))
    return None


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    source, target = FLAGS["from"].value, FLAGS.to
    require(source and target and FLAGS.format, "--from, --to and --format are required")
    require(os.path.exists(source) or os.path.exists(source + ".index"), f"--from: {source} does not exist")
    require(not os.path.exists(target) or (os.path.isdir(target) and not os.listdir(target)),
            f"--to: {target} exists and is not an empty directory")
    require(FLAGS.spm_model_file is None or os.path.isfile(FLAGS.spm_model_file),
            f"--spm_model_file: {FLAGS.spm_model_file} does not exist")
    try:
        model, report, spm_model_file = read_any(source)
    except (ValueError, FileNotFoundError, TypeError) as error:
        raise UsageError(f"--from {source}: {error}") from None
    try:
        with atomic_directory(target) as staging:  # --to appears only complete.
            left_out = write(model, staging, FLAGS.format, FLAGS.spm_model_file or spm_model_file)
    except (ValueError, FileNotFoundError, TypeError) as error:
        raise UsageError(f"--to {target}: {error}") from None
    print(report)
    print(f"Wrote {type(model).__name__} as {FLAGS.format} to {target}"
          + (f"; left out {left_out}." if left_out else "."))


def console_main():
    """The `albert-convert` command (`python -m albert_tf.convert`)."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
