"""Raw text -> ALBERT pretraining TFRecords (n-gram whole-word MLM + sentence-order pairs).

Same flags, defaults, algorithm and TFRecord schema as google-research/albert's script, but
streaming (memory bounded by `--input_chunk_bytes`, not by the corpus), parallel
(`--num_workers`), reproducible (every random choice flows from `--random_seed`) and resumable
(complete shards are skipped on a rerun).

    python -m albert_cli.create_pretraining_data --input_file=corpus.txt \\
        --output_file=train.tfrecord --spm_model_file=30k-clean.model

Python callers use `data_prep.create_pretraining_data.build(input_file=..., ...)`, whose keyword
arguments are the flags. The same build runs on Apache Beam: `albert_cli.beam_pipeline`.
"""

import sys

from absl import flags

from albert_cli.cli import require, run_main
from data_prep.create_pretraining_data import build

FLAGS = flags.FLAGS


def define_builder_flags():
    """The flags shared by this script and the Beam pipeline (the original's, plus ours)."""
    flags.DEFINE_string("input_file", None, "Raw text: comma-separated paths and/or globs. One "
                        "sentence per line, a blank line between documents (albert_cli.split_corpus splits "
                        "paragraphs).")
    flags.DEFINE_string("output_file", None, "Comma-separated TFRecord files (input chunks are "
                        "dealt round-robin to them), or a prefix when --num_output_shards is set.")
    flags.DEFINE_integer("num_output_shards", 0, "If > 0, write <output_file>-0000i-of-0000N "
                         "files instead of the --output_file list.")
    flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary; only read when no "
                        "--spm_model_file is given.")
    flags.DEFINE_string("spm_model_file", None, "SentencePiece model (e.g. 30k-clean.model).")
    flags.DEFINE_string("albert_config_file", None, "Optional albert_config.json: its vocab_size "
                        "must equal the tokenizer's.")
    flags.DEFINE_bool("do_lower_case", True, "Lowercase the text (all released English models).")
    flags.DEFINE_bool("do_whole_word_mask", True, "Mask whole words (n-grams of words), not pieces.")
    flags.DEFINE_bool("do_permutation", False, "Add permuted-token targets (experimental, as in the "
                      "original; doubles the masked_lm_* features).")
    flags.DEFINE_bool("favor_shorter_ngram", True, "p(n) proportional to 1/n (else reversed).")
    flags.DEFINE_bool("random_next_sentence", False, "BERT next-sentence pairs instead of ALBERT's "
                      "sentence-order pairs.")
    flags.DEFINE_bool("sop_single_segment_random_negatives", True, "As the original: a chunk of "
                      "one line gets B from a random other document, labelled 1. If False, the "
                      "line is split at a random token and gets the usual order swap.")
    flags.DEFINE_integer("max_seq_length", 512, "Maximum sequence length.")
    flags.DEFINE_integer("ngram", 3, "Largest n-gram (in whole words) to mask.")
    flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum masked positions per sequence.")
    flags.DEFINE_integer("random_seed", 12345, "Seed of every random choice.")
    flags.DEFINE_integer("dupe_factor", 40, "Passes over the corpus, each with new chunks and masks.")
    flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
    flags.DEFINE_float("short_seq_prob", 0.1, "Probability of a shorter target length.")
    flags.DEFINE_integer("input_chunk_bytes", 1 << 20, "Bytes of input text per chunk: the unit of "
                         "work, of memory and of the pool of random-document segments.")


def builder_settings_from_flags():
    return {name: FLAGS[name].value for name in (
        "input_file", "output_file", "num_output_shards", "vocab_file", "spm_model_file",
        "albert_config_file", "do_lower_case", "do_whole_word_mask", "do_permutation",
        "favor_shorter_ngram", "random_next_sentence", "sop_single_segment_random_negatives",
        "max_seq_length", "ngram", "max_predictions_per_seq", "random_seed", "dupe_factor",
        "masked_lm_prob", "short_seq_prob", "input_chunk_bytes")}


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    result = build(num_workers=FLAGS.num_workers, **builder_settings_from_flags())
    stats = result["stats"]
    sys.stderr.write(
        f"wrote {stats['instances']} instances to {len(stats['output_files'])} file(s) "
        f"({len(result['skipped_shards'])} already complete, skipped); statistics: "
        f"{result['stats_file']}\n")


def console_main():
    """The `albert-create-pretraining-data` command (`python -m albert_cli.create_pretraining_data`)."""
    define_builder_flags()
    flags.DEFINE_integer("num_workers", 0, "Worker processes (0: one per CPU). Output bytes do not "
                         "depend on it; parallelism is at most the number of output shards.")
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
