"""Exports a pretrained ALBERT encoder and its text preprocessing as two SavedModels (TF-Hub layout).

    albert-export-encoder --init_checkpoint=output/pretraining --export_dir=output/hub

Writes <export_dir>/encoder/<version>/ and <export_dir>/preprocessing/<version>/; with
--export_tflite=DIR, DIR/embedder_{float32,dynamic_int8}.tflite for MediaPipe's TextEmbedder.
"""

import os

from absl import flags

from albert_cli.cli import prefer_onednn
from albert_cli.tensorflow_logs import quiet_tensorflow

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

from albert_cli.bundled import SPM_MODEL, TINY_CONFIG
from albert_cli import export_flags
from albert_tf.tasks.export_formats import LITERT, SAVED_MODEL, check_litert_output, export_all
from albert_tf.tasks.output_dirs import check_export_version_is_new
from albert_cli.cli import UsageError, load_init_checkpoint, require, require_output_dir, run_main
from albert_tf.choices import EMBEDDING_POOLINGS

FLAGS = flags.FLAGS

flags.DEFINE_string("albert_config_file", TINY_CONFIG, "albert_config.json of the model (default: the config of a Hugging Face / keras-hub --init_checkpoint, else the bundled tiny one).")
flags.DEFINE_string("init_checkpoint", None, "Original TF1 checkpoint or one from run_pretraining.py.")
flags.DEFINE_string("spm_model_file", SPM_MODEL, "SentencePiece model (default: the official 30k-clean.model).")
flags.DEFINE_bool("do_lower_case", True, "Lowercase the text (the English models are uncased).")
flags.DEFINE_integer("seq_length", 128, "Sequence length of the preprocessing model's __call__ (at most the "
                     "config's max_position_embeddings).", lower_bound=3)
flags.DEFINE_string("export_dir", None, "Where to write encoder/ and preprocessing/.")
flags.DEFINE_string("export_tflite", None, "Also write LiteRT models of the encoder (float32 and dynamic-range int8) "
                    "that MediaPipe's TextEmbedder runs on raw text, of --seq_length tokens, to this directory.")
flags.DEFINE_enum("tflite_pooling", "mean", list(EMBEDDING_POOLINGS), "With --export_tflite: the embedding, the mean of "
                  "the last layer over the text's tokens or the pooled output ([CLS] through the pooler).")
export_flags.define_export_flags()
flags.adopt_module_key_flags(export_flags)  # shown by --help


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require_output_dir("export_dir", FLAGS.export_dir, create=False)
    check_export_version_is_new(FLAGS.export_dir, FLAGS.export_version, ("encoder", "preprocessing"))
    if FLAGS.export_tflite is not None:
        check_litert_output(FLAGS.export_tflite, "embedder", FLAGS.do_lower_case, "MediaPipe")
    # TensorFlow loads only past --help and the flag checks.
    from albert_cli.task_config import given_config_file  # pylint: disable=g-import-not-at-top
    from albert_tf.tasks.model_inputs import inspected_init_checkpoint, model_config  # pylint: disable=g-import-not-at-top
    from albert_tf import AlbertModel  # pylint: disable=g-import-not-at-top
    from albert_tf.serving.encoder_export import export_encoder  # pylint: disable=g-import-not-at-top
    from albert_tf.serving.litert.publish import export_tflite_embedder  # pylint: disable=g-import-not-at-top
    from albert_tf.text.tokenization import AlbertTokenizer  # pylint: disable=g-import-not-at-top

    init_checkpoint = inspected_init_checkpoint(FLAGS.init_checkpoint)
    config = model_config(given_config_file(FLAGS), FLAGS.init_checkpoint, init_checkpoint, FLAGS.albert_config_file)
    try:
        tokenizer = AlbertTokenizer(FLAGS.spm_model_file, do_lower_case=FLAGS.do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    require(config.vocab_size == tokenizer.vocab_size,
            f"--albert_config_file: vocab_size {config.vocab_size} does not match --spm_model_file's "
            f"{tokenizer.vocab_size} pieces")
    require(FLAGS.seq_length <= config.max_position_embeddings,
            f"--seq_length must be at most {config.max_position_embeddings}, got {FLAGS.seq_length}")
    encoder = AlbertModel(config)
    load_init_checkpoint(encoder, init_checkpoint)

    def saved_models():
        return export_encoder(encoder, FLAGS.spm_model_file, FLAGS.export_dir, do_lower_case=FLAGS.do_lower_case,
                              seq_length=FLAGS.seq_length, **export_flags.export_options())

    def tflite_files():
        return export_tflite_embedder(encoder, FLAGS.export_tflite, FLAGS.spm_model_file, FLAGS.seq_length,
                                      pooling=FLAGS.tflite_pooling)

    export_all([(LITERT, tflite_files if FLAGS.export_tflite is not None else None), (SAVED_MODEL, saved_models)], print)


def console_main():
    """The `albert-export-encoder` command."""
    # An untrained encoder is of no use: --init_checkpoint is required.
    flags.mark_flags_as_required(["export_dir", "init_checkpoint"])
    flags.register_validator("spm_model_file", lambda path: "://" in path or os.path.exists(path),
                             message="file does not exist")
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
