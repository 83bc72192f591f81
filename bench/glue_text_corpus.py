"""GLUE training text, without labels, as a pretraining corpus: does in-domain pretraining transfer?

    python bench/glue_text_corpus.py --data_dir=$GLUE_DIR --output_file=glue_text/train.txt
    python bench/glue_text_corpus.py --data_dir=$GLUE_DIR --split=dev --output_file=glue_text/dev.txt

Writes the text of one split (the training text to pretrain on; the dev text only to evaluate
held-out MLM on, never to train) in the layout
`albert_cli.create_pretraining_data` reads: one sentence per line, a blank line between documents.
A pair task's example (MRPC, STS-B) is a document of its two sentences; single-sentence tasks'
rows (SST-2, CoLA) are grouped `--sentences_per_document` at a time, in file order. The point is
a control for the transfer experiment in bench/results/history.md: if pretraining on the tasks' own text
does not beat random initialisation either, the fault is in initialisation or fine-tuning, not in
the books.
"""

import argparse
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from albert_cli.cli import flag_text  # noqa: E402
from albert_tf.glue.examples import read_examples  # noqa: E402
from albert_tf.glue.tasks import get_task  # noqa: E402
from albert_tf.io_utils import atomic_open  # noqa: E402


def documents(task_name, split, data_dir, sentences_per_document):
    """Yields one task's text of `split` as lists of sentences."""
    examples = read_examples(get_task(task_name), split, data_dir=data_dir).examples
    if examples and examples[0].text_b is not None:
        for example in examples:
            yield [example.text_a, example.text_b]
        return
    texts = [example.text_a for example in examples]
    for start in range(0, len(texts), sentences_per_document):
        yield texts[start:start + sentences_per_document]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", required=True, help="GLUE TSVs in the layout <data_dir>/<TASK>/train.tsv")
    parser.add_argument("--output_file", required=True)
    parser.add_argument("--split", default="train", choices=("train", "dev"))
    parser.add_argument("--tasks", default="SST-2,CoLA,MRPC,STS-B")
    parser.add_argument("--sentences_per_document", type=int, default=8)
    args = parser.parse_args()
    if args.sentences_per_document < 1:
        parser.error(f"--sentences_per_document: expected a positive number, got {args.sentences_per_document}")
    counts = {}
    try:
        with atomic_open(args.output_file, "w") as out:
            for task_name in args.tasks.split(","):
                counts[task_name] = 0
                for document in documents(task_name, args.split, args.data_dir, args.sentences_per_document):
                    out.write("\n".join(" ".join(text.split()) for text in document) + "\n\n")
                    counts[task_name] += len(document)
    except (OSError, ValueError) as error:
        print(f"error: {flag_text(error)}", file=sys.stderr)
        return 2
    print(f"{args.output_file}: " + ", ".join(f"{task} {n} sentences" for task, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
