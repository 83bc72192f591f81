"""The SentencePiece model with ALBERT's normalization in its own: SentencePiece alone on raw text
gives our tokenizer's pieces, over every text of the bundled GLUE dev sets."""

import csv
import glob
import os

import sentencepiece as spm

from albert_tf.text.folded_sentencepiece import folded_model
from albert_tf.text.tokenization import AlbertTokenizer, encode_pieces
from data_prep.train_sentencepiece import CONTROL_SYMBOLS, USER_DEFINED_SYMBOLS
from glue_test_data import GLUE_DIR, SPM_MODEL


def dev_texts(tasks=("*",)):
    """Every field of the bundled GLUE dev sets of `tasks` (directory names or globs)."""
    texts = []
    for path in sorted(path for task in tasks for path in glob.glob(os.path.join(GLUE_DIR, task, "dev.tsv"))):
        with open(path, encoding="utf-8", newline="") as handle:
            texts += [field for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE) for field in row]
    return texts


def test_sentencepiece_alone_with_the_folded_model_tokenizes_raw_text_as_albert():
    with open(SPM_MODEL, "rb") as handle:
        folded = spm.SentencePieceProcessor(model_proto=folded_model(handle.read()))
    tokenizer = AlbertTokenizer(SPM_MODEL)
    texts = dev_texts() + ["CLICHÉ naïveté Maelström Ångström", "a\u00a0b\u2003c", "e\u0301te\u0301", "ﬁne ①"]
    assert len(texts) > 20_000
    assert folded.get_piece_size() == tokenizer.vocab_size
    # The pieces with our digit-comma rule applied on top are ours, text for text ...
    assert [encode_pieces(folded, text) for text in texts] == [tokenizer.tokenize(text) for text in texts]
    # ... and without it they differ only where a digit meets a comma.
    differing = [text for text in texts if folded.encode(text, out_type=str) != tokenizer.tokenize(text)]
    assert differing and all(any(a.isdigit() and b == "," for a, b in zip(t, t[1:])) for t in differing)
    assert folded.encode("how do you spell cliché ?", out_type=str) == ["▁how", "▁do", "▁you", "▁spell", "▁cliche",
                                                                        "▁", "?"]


def test_a_model_without_a_character_map_gets_albert_folding_alone(tmp_path):
    """A SentencePiece model trained with normalization "identity" has no character map to compose:
    the folded model's normalizer is ALBERT's folding alone, and tokenizes raw text as we do."""
    import io

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter([f"a cafe menu, item {i} : tea or coffee" for i in range(200)]),
                                   model_writer=model, vocab_size=40, normalization_rule_name="identity",
                                   hard_vocab_limit=False, minloglevel=2, pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
                                   control_symbols=CONTROL_SYMBOLS, user_defined_symbols=USER_DEFINED_SYMBOLS)
    (tmp_path / "identity.model").write_bytes(model.getvalue())
    folded = spm.SentencePieceProcessor(model_proto=folded_model(model.getvalue()))
    tokenizer = AlbertTokenizer(str(tmp_path / "identity.model"))
    texts = ["A  CAFÉ menu", "Tea  or ＣＯＦＦＥＥ"]
    assert [folded.encode(text, out_type=str) for text in texts] == [tokenizer.tokenize(text) for text in texts]
    assert folded.encode("CAFÉ", out_type=str) != spm.SentencePieceProcessor(
        model_proto=model.getvalue()).encode("CAFÉ", out_type=str)  # the folding is there


def test_folding_prints_nothing():
    """sentencepiece's builder logs "Loading CharsMap of size=..." at INFO: an export is quiet."""
    import subprocess
    import sys

    script = ("from albert_tf.text.folded_sentencepiece import folded_model; "
              f"folded_model(open({SPM_MODEL!r}, 'rb').read()); print('done')")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr[-2000:]
    assert "CharsMap" not in result.stderr and "normalizer blob" not in result.stderr, result.stderr[-2000:]
