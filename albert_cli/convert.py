"""Converts ALBERT weights between formats: Hugging Face, keras-hub presets and the original's TF1.

    albert-convert --from=albert-base-v2 --to=out/albert_base --format=tf1

(`python -m albert_cli.convert ...` in a checkout.) The input format is recognised (an HF directory, a keras-hub
preset, or a TF1 checkpoint with `--albert_config_file`, by default the `albert_config.json` beside it); the model it
holds (backbone, pretraining heads or a classifier) is loaded strictly and written in `--format`. The SentencePiece
model travels along when the input has one.
"""

import os

from absl import flags

from albert_cli.cli import UsageError, require, run_main
from albert_cli.tensorflow_logs import quiet_tensorflow
from albert_tf.choices import CONVERT_FORMATS
from albert_tf.io_utils import atomic_directory

TF1_CONFIG_NAME = "albert_config.json"

FLAGS = flags.FLAGS
flags.DEFINE_string("from", None, "Input: an HF checkpoint directory, a keras-hub preset or a TF1 checkpoint.")
flags.DEFINE_string("to", None, "Output directory (created; must not hold files).")
flags.DEFINE_enum("format", None, CONVERT_FORMATS, "Output format.")
flags.DEFINE_string("albert_config_file", None, f"TF1 input or our run's output: its config (default: the {TF1_CONFIG_NAME} beside it, which our runs write).")
flags.DEFINE_bool("backbone_only", False, "Convert the backbone alone, leaving out the input's heads (MLM, SOP, classifier, SQuAD); without it every weight is converted, or the command refuses.")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model to write along (default: the input's own).")
flags.DEFINE_bool("do_lower_case", True, "HF output: the tokenizer lowercases (the English models are uncased).")
flags.DEFINE_bool("erf_gelu_as_tanh", False, "HF input: read hidden_act 'gelu' (erf) as the original's tanh GELU.")


def _heads_error(source, error):
    return UsageError(f"--from {source} holds the {', '.join(error.heads)}, which {error.place} cannot hold; "
                      "pass --backbone_only to convert the backbone alone")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    source, target = FLAGS["from"].value, FLAGS.to
    require(source and target and FLAGS.format, "--from, --to and --format are required")
    require(os.path.exists(source) or os.path.exists(source + ".index"), f"--from: {source} does not exist")
    require(not os.path.exists(target) or (os.path.isdir(target) and not os.listdir(target)),
            f"--to: {target} exists and is not an empty directory")
    require(FLAGS.spm_model_file is None or os.path.isfile(FLAGS.spm_model_file),
            f"--spm_model_file: {FLAGS.spm_model_file} does not exist")
    from albert_tf.checkpoints import formats  # pylint: disable=g-import-not-at-top  (TensorFlow: only when used)
    from albert_tf.convert import NoPlaceForHeads, input_label_names, read_any, write  # pylint: disable=g-import-not-at-top

    require(FLAGS.albert_config_file or formats.foreign_format(source) or formats.albert_config_file(source),
            f"--from {source}: no {TF1_CONFIG_NAME} beside it; pass the checkpoint's config as --albert_config_file")

    try:
        model, report, spm_model_file = read_any(source, FLAGS.albert_config_file, FLAGS.erf_gelu_as_tanh,
                                                 FLAGS.backbone_only)
        label_names = input_label_names(source, FLAGS.albert_config_file) if hasattr(model, "num_labels") else None
    except NoPlaceForHeads as error:
        raise _heads_error(source, error) from None
    except (ValueError, FileNotFoundError, TypeError) as error:
        raise UsageError(f"--from {source}: {error}") from None
    try:
        with atomic_directory(target) as staging:  # --to appears only complete.
            write(model, staging, FLAGS.format, FLAGS.spm_model_file or spm_model_file, FLAGS.do_lower_case,
                  label_names)
    except NoPlaceForHeads as error:
        raise _heads_error(source, error) from None
    except (ValueError, FileNotFoundError, TypeError) as error:
        raise UsageError(f"--to {target}: {error}") from None
    except OSError as error:  # a read-only or full --to: atomic_directory has removed its staging copy
        raise UsageError(f"--to {target}: cannot write ({error.strerror or error})") from None
    print(report)
    print(f"Wrote {type(model).__name__} as {FLAGS.format} to {target}"
          + (f"; left out {', '.join(report.other_heads)} (--backbone_only)." if FLAGS.backbone_only and report.other_heads else "."))


def console_main():
    """The `albert-convert` command (`python -m albert_cli.convert`)."""
    quiet_tensorflow()  # before TensorFlow loads, as the run_* scripts
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
