"""A SQuAD 2.0 file's answerable questions as a SQuAD 1.1 file, e.g. from the bundled slice:

    python -m albert_cli.squad_answerable --input_file=data/squad/train-v2.0-sample.json \\
        --output_file=squad/train-answerable.json

Why: `albert_tf.squad.answerable`.
"""

from absl import flags

from albert_cli.cli import require, run_main
from albert_tf.squad.answerable import answerable_only

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", None, "A SQuAD JSON file (2.0: with is_impossible questions).")
flags.DEFINE_string("output_file", None, "The SQuAD 1.1 JSON file to write (its answerable questions).")


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    require(FLAGS.input_file, "--input_file is required")
    require(FLAGS.output_file, "--output_file is required")
    counts = answerable_only(FLAGS.input_file, FLAGS.output_file)
    print(f"{counts['kept']} of {counts['questions']} questions are answerable: {FLAGS.output_file}")


if __name__ == "__main__":
    run_main(main, help_module=__name__)
