"""Exports a pretrained ALBERT encoder and its text preprocessing as two SavedModels (TF-Hub layout).

    python export_encoder.py --init_checkpoint=output/pretraining --export_dir=output/hub

Writes <export_dir>/encoder/<version>/ and <export_dir>/preprocessing/<version>/; see docs/serving.md.
"""

import os

from absl import flags, logging

from albert_tf.cli import prefer_onednn

prefer_onednn()  # before TensorFlow loads

from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.cli import UsageError, require, run_main
from albert_tf.glue.initialization import initialize_from_checkpoint
from albert_tf.kernels import EXPORT_KERNEL_SETS
from albert_tf.serving.encoder_export import export_encoder
from albert_tf.tokenization import AlbertTokenizer

FLAGS = flags.FLAGS

flags.DEFINE_string("albert_config_file", "configs/albert_tiny.json", "albert_config.json of the model.")
flags.DEFINE_string("init_checkpoint", None, "Original TF1 checkpoint or one from run_pretraining.py.")
flags.DEFINE_string("spm_model_file", "data/albert_spm/30k-clean.model", "SentencePiece model.")
flags.DEFINE_bool("do_lower_case", True, "Lowercase the text (the English models are uncased).")
flags.DEFINE_integer("seq_length", 128, "Sequence length of the preprocessing model's __call__.")
flags.DEFINE_string("export_dir", None, "Where to write encoder/ and preprocessing/.")
flags.DEFINE_enum("export_kernels", "reference", EXPORT_KERNEL_SETS,
                  "Kernel set the encoder is traced with (plain TF ops only; docs/serving.md).")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require(FLAGS.export_dir, "--export_dir is required")
    require(FLAGS.init_checkpoint, "--init_checkpoint is required (an untrained encoder is of no use)")
    require(os.path.exists(FLAGS.spm_model_file), f"--spm_model_file: {FLAGS.spm_model_file} does not exist")
    try:
        config = AlbertConfig.from_json_file(FLAGS.albert_config_file)
    except ValueError as error:
        raise UsageError(f"--albert_config_file: {error}") from None
    try:
        tokenizer = AlbertTokenizer(FLAGS.spm_model_file, do_lower_case=FLAGS.do_lower_case)
    except ValueError as error:
        raise UsageError(str(error)) from None  # it names spm_model_file
    require(config.vocab_size == tokenizer.vocab_size,
            f"--albert_config_file: vocab_size {config.vocab_size} does not match --spm_model_file's "
            f"{tokenizer.vocab_size} pieces")
    require(3 <= FLAGS.seq_length <= config.max_position_embeddings,
            f"--seq_length must be in [3, {config.max_position_embeddings}], got {FLAGS.seq_length}")
    # A classifier shell reuses the checkpoint logic; only its encoder is exported.
    model = AlbertClassifier(config, num_labels=2)
    initialize_from_checkpoint(model, FLAGS.init_checkpoint)
    paths = export_encoder(model.albert, FLAGS.spm_model_file, FLAGS.export_dir,
                           do_lower_case=FLAGS.do_lower_case, seq_length=FLAGS.seq_length,
                           kernels=FLAGS.export_kernels)
    logging.info("exported %s and %s", *paths)


if __name__ == "__main__":
    run_main(main)
