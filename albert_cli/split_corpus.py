"""Paragraph-per-line text -> one sentence per line, with a held-out tail of every document.

    python -m albert_cli.split_corpus --input_file=books.txt --output_dir=text/ \\
        --heldout_fraction=0.03        # writes text/train.txt and text/heldout.txt
    python -m albert_cli.split_corpus --input_file='gutenberg/*.txt' --one_document_per_file \\
        --output_dir=text/             # plain-text books: blank lines between paragraphs

Why, and why a tail of every document: `data_prep.split_corpus`.
"""

from absl import flags

from albert_cli.cli import require, run_main
from data_prep.split_corpus import split_corpus

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", None, "Comma-separated paths/globs. Text: one paragraph (or sentence) per line, a blank line between documents.")
flags.DEFINE_string("output_dir", None, "Directory for train.txt and heldout.txt.")
flags.DEFINE_bool("one_document_per_file", False, "Each file is one document (a book), its paragraphs "
                  "separated by blank lines (plain-text Project Gutenberg books).")
flags.DEFINE_float("heldout_fraction", 0.03, "Share of each document's lines (its tail) held out.")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require(FLAGS.input_file, "--input_file is required")
    require(FLAGS.output_dir, "--output_dir is required")
    counts = split_corpus(FLAGS.input_file, FLAGS.output_dir, FLAGS.heldout_fraction,
                          FLAGS.one_document_per_file)
    print(f"{counts['documents']} documents: {counts['train']} training sentences, "
          f"{counts['heldout']} held-out sentences in {FLAGS.output_dir}")


def console_main():
    """The `albert-split-corpus` command (`python -m albert_cli.split_corpus`)."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
