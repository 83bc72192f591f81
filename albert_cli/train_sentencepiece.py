"""Trains a SentencePiece vocabulary with the settings of ALBERT's released 30k-clean model.

    python -m albert_cli.train_sentencepiece --input=corpus/*.txt --model_prefix=out/30k \\
        --vocab_size=30000

Input: text files, one sentence or paragraph per line (blank lines are skipped). Every line is
first normalised with `preprocess_text` (whitespace collapse, accent stripping, lowercasing
unless --nodo_lower_case), because that is exactly the text `AlbertTokenizer` hands to
SentencePiece: the released vocabulary has no upper-case and no accented pieces, so it was
trained on such text too. Writes `<prefix>.model` and `<prefix>.vocab` ("piece<TAB>score"),
each under a temporary name until complete.
"""

import os

from albert_cli.tensorflow_logs import quiet_tensorflow

quiet_tensorflow()  # before TensorFlow loads

from absl import flags

from albert_cli.cli import require, run_main
from albert_tf.io_utils import atomic_open, refuse_overwriting_inputs
from data_prep.train_sentencepiece import SPECIAL_PIECE_COUNT, expand_inputs, gfile, train, vocab_lines

FLAGS = flags.FLAGS
flags.DEFINE_list("input", None, "Comma-separated text files or glob patterns (local or gs://).")
flags.DEFINE_string("model_prefix", None, "Output prefix: writes <prefix>.model and <prefix>.vocab.")
flags.DEFINE_integer("vocab_size", 30000, "Number of pieces, special pieces included.")
flags.DEFINE_bool("do_lower_case", True, "Lowercase the text (the released English models are uncased).")
flags.DEFINE_float("character_coverage", 0.99995, "Share of characters the vocabulary must cover.")
flags.DEFINE_integer(
    "input_sentence_size", 10_000_000, "Lines sampled for training (reservoir sampling beyond this)."
)
flags.DEFINE_bool("shuffle_input_sentence", True, "Sample lines at random when there are more than needed.")
flags.DEFINE_integer("num_threads", os.cpu_count() or 1, "Training threads.")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require(FLAGS.input, "--input is required (text files, one sentence or paragraph per line)")
    require(FLAGS.model_prefix, "--model_prefix is required (writes <prefix>.model and <prefix>.vocab)")
    require(
        FLAGS.vocab_size > SPECIAL_PIECE_COUNT,
        f"--vocab_size must exceed the {SPECIAL_PIECE_COUNT} special and user-defined pieces, "
        f"got {FLAGS.vocab_size}",
    )
    require(
        0 < FLAGS.character_coverage <= 1,
        f"--character_coverage must be in (0, 1], got {FLAGS.character_coverage}",
    )
    require(
        FLAGS.input_sentence_size > 0,
        f"--input_sentence_size must be positive, got {FLAGS.input_sentence_size}",
    )
    require(FLAGS.num_threads > 0, f"--num_threads must be positive, got {FLAGS.num_threads}")
    directory = os.path.dirname(FLAGS.model_prefix)
    require(
        not directory or gfile().isdir(directory),
        f"--model_prefix: directory {directory!r} does not exist",
    )
    paths = expand_inputs(FLAGS.input)
    refuse_overwriting_inputs([("--model_prefix", FLAGS.model_prefix + suffix) for suffix in (".model", ".vocab")],
                              [("--input", path) for path in paths])
    model_proto = train(
        paths,
        FLAGS.vocab_size,
        do_lower_case=FLAGS.do_lower_case,
        character_coverage=FLAGS.character_coverage,
        input_sentence_size=FLAGS.input_sentence_size,
        shuffle_input_sentence=FLAGS.shuffle_input_sentence,
        num_threads=FLAGS.num_threads,
    )
    with atomic_open(FLAGS.model_prefix + ".model", "wb") as handle:
        handle.write(model_proto)
    with atomic_open(FLAGS.model_prefix + ".vocab", "w") as handle:
        handle.write("".join(vocab_lines(model_proto)))
    print(f"wrote {FLAGS.model_prefix}.model and {FLAGS.model_prefix}.vocab")


def console_main():
    """The `albert-train-sentencepiece` command (`python -m albert_cli.train_sentencepiece`)."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
