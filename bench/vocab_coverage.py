"""How much of a GLUE task's text did pretraining ever show the model? Token coverage by vocabulary.

    python bench/vocab_coverage.py --spm_model_file=data/albert_spm/30k-clean.model \\
        --corpus=gutenberg/text/train.txt --data_dir=$GLUE_DIR

A vocabulary trained on far more text than the pretraining corpus (the official 30k-clean, for
15 books) has pieces the corpus never contains: they are inputs only as random replacements for
masked tokens and never MLM targets, so their embedding rows are barely trained. This counts, for each task's training
text, the share of its tokens whose piece occurs never, or fewer than 10 times, in the corpus,
and the median tokens per example (both segments of a pair), which a smaller vocabulary raises.
Prints a Markdown table.
"""

import argparse
import collections
import os
import statistics
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from albert_tf.glue.examples import read_examples  # noqa: E402
from albert_tf.glue.tasks import get_task  # noqa: E402
from albert_tf.text.tokenization import AlbertTokenizer  # noqa: E402

RARE = 10  # "seen fewer than 10 times": too few updates for a row to move far from its init


def corpus_counts(tokenizer, path):
    """{piece id: occurrences} over the corpus, one paragraph or sentence per line."""
    counts = collections.Counter()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                counts.update(tokenizer.encode(line))
    return counts


def task_coverage(tokenizer, counts, task_name, data_dir, split="train"):
    """{tokens, unseen, rare (shares of tokens), median_tokens (per example)} of one task's split."""
    tokens = unseen = rare = 0
    lengths = []
    for example in read_examples(get_task(task_name), split, data_dir=data_dir).examples:
        ids = [i for text in (example.text_a, example.text_b) if text for i in tokenizer.encode(text)]
        lengths.append(len(ids))
        tokens += len(ids)
        unseen += sum(1 for i in ids if counts[i] == 0)
        rare += sum(1 for i in ids if counts[i] < RARE)
    return {"tokens": tokens, "unseen": unseen / max(tokens, 1), "rare": rare / max(tokens, 1),
            "median_tokens": statistics.median(lengths) if lengths else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spm_model_file", required=True)
    parser.add_argument("--corpus", required=True, help="the pretraining text (e.g. split_corpus's train.txt)")
    parser.add_argument("--data_dir", required=True, help="GLUE TSVs in the layout <data_dir>/<TASK>/train.tsv")
    parser.add_argument("--tasks", default="SST-2,CoLA,MRPC,STS-B")
    args = parser.parse_args()
    try:
        tokenizer = AlbertTokenizer(args.spm_model_file)
        counts = corpus_counts(tokenizer, args.corpus)
        rows = {task: task_coverage(tokenizer, counts, task, args.data_dir) for task in args.tasks.split(",")}
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{os.path.basename(args.spm_model_file)}: {tokenizer.vocab_size} pieces, "
          f"{len(counts)} of them in the corpus ({sum(counts.values())} tokens)")
    print(f"| task | training tokens | never in the corpus | fewer than {RARE} times | median tokens per example |")
    print("|---|---|---|---|---|")
    for task, row in rows.items():
        print(f"| {task} | {row['tokens']:,} | {row['unseen']:.1%} | {row['rare']:.1%} | {row['median_tokens']:g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
