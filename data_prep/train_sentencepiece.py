"""Trains a SentencePiece vocabulary with the settings of ALBERT's released 30k-clean model.

Input: text files, one sentence or paragraph per line (blank lines are skipped). Every line is
first normalised with `preprocess_text` (whitespace collapse, accent stripping, lowercasing
unless `do_lower_case` is False), because that is exactly the text `AlbertTokenizer` hands to
SentencePiece: the released vocabulary has no upper-case and no accented pieces, so it was
trained on such text too. The command is `albert-train-sentencepiece`
(`python -m albert_cli.train_sentencepiece`).
"""

import io
import os
import runpy

import sentencepiece as spm

from albert_tf.progress import Progress
from albert_tf.text.tokenization import preprocess_text

CONTROL_SYMBOLS = ["[CLS]", "[SEP]", "[MASK]"]
USER_DEFINED_SYMBOLS = ["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]
SPECIAL_PIECE_COUNT = 2 + len(CONTROL_SYMBOLS) + len(USER_DEFINED_SYMBOLS)  # + <pad>, <unk>


def gfile():
    """`tf.io.gfile` (local and gs:// paths), imported on first use: --help needs no TensorFlow."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    return tf.io.gfile


def expand_inputs(patterns):
    """The files named by comma-separated paths/globs, in order; every pattern must match."""
    paths = []
    for pattern in patterns:
        matches = sorted(gfile().glob(pattern))
        if not matches:
            raise FileNotFoundError(f"--input {pattern!r} matches no file")
        paths.extend(matches)
    return paths


class CorpusLines:
    """The non-blank lines of `paths`, normalised as the tokenizer will see them.

    A bad line raises ValueError, and the error is also kept in `.error`: SentencePiece calls
    the iterator from C++ and re-raises anything as a RuntimeError with a Python traceback inside.
    """

    def __init__(self, paths, do_lower_case):
        self.paths = paths
        self.do_lower_case = do_lower_case
        self.error = None
        self.progress = Progress("train_sentencepiece: reading", unit="lines")

    def __iter__(self):
        for path in self.paths:
            with gfile().GFile(path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    try:
                        line = raw.decode("utf-8")
                    except UnicodeDecodeError as error:
                        self.error = ValueError(
                            f"--input {path}: line {number} is not UTF-8 ({error.reason})"
                        )
                        raise self.error from None
                    line = preprocess_text(line, lower=self.do_lower_case)
                    if line:
                        self.progress.update(extra=f"file {os.path.basename(path)}")
                        yield line
        self.progress.close()


def train(paths, vocab_size, do_lower_case=True, character_coverage=0.99995,
          input_sentence_size=10_000_000, shuffle_input_sentence=True, num_threads=1):
    """Trains the unigram model on `paths`; returns the serialized model proto."""
    lines = CorpusLines(paths, do_lower_case)
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="unigram",
            vocab_size=vocab_size,
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            control_symbols=CONTROL_SYMBOLS,
            user_defined_symbols=USER_DEFINED_SYMBOLS,
            character_coverage=character_coverage,
            input_sentence_size=input_sentence_size,
            shuffle_input_sentence=shuffle_input_sentence,
            num_threads=num_threads,
            minloglevel=1,  # SentencePiece's INFO lines would drown the progress line
        )
    except RuntimeError as error:
        if lines.error:
            raise lines.error from None
        # SentencePiece's own checks, e.g. a vocabulary too large for the text.
        raise ValueError(f"SentencePiece training failed: {error}") from None
    return model.getvalue()


def vocab_lines(model_proto):
    """`.vocab` lines in SentencePiece's own format: piece, a tab, the score as C++ prints it."""
    processor = spm.SentencePieceProcessor(model_proto=model_proto)
    return [
        f"{processor.IdToPiece(i)}\t{processor.GetScore(i):g}\n" for i in range(processor.GetPieceSize())
    ]


if __name__ == "__main__":
    # The command (its flags and main) is albert_cli's; run by name, so the library imports none of it.
    runpy.run_module("albert_cli.train_sentencepiece", run_name="__main__", alter_sys=True)
