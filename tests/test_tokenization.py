"""The Python tokenizer: the original's normalisation, the digit-comma rule, HF parity, WordPiece."""

import os

import pytest
import transformers

from albert_tf.checkpoints.huggingface_tokenizer import tokenizer_json
from albert_tf.text.tokenization import AlbertTokenizer, encode_pieces, preprocess_text, truncate_seq_pair
from bench._common import text_lines

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
def shipped_text_lines():
    return text_lines(os.path.join(REPO, "data"))


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(spm_model_file=SPM_MODEL)


def test_shipped_text_lines_cover_every_file():
    lines = shipped_text_lines()
    # 4 tasks x (1000 train + full dev + 200 test) rows, pairs counted twice, plus the corpus.
    assert len(lines) > 17000
    assert all(isinstance(line, str) and line for line in lines[:100])


def test_known_ids(tokenizer):
    text = "ALBERT: A Lite BERT for Self-supervised Learning of Language Representations"
    assert tokenizer.encode(text) == [
        2953, 45, 21, 13, 10601, 11502, 26, 1119, 8, 8542, 3762, 69, 2477, 16, 816, 18667
    ]
    assert tokenizer.encode("this is a test") == [48, 25, 21, 1289]


def test_special_ids_and_vocab(tokenizer):
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (
        0, 1, 2, 3, 4
    )
    assert tokenizer.vocab_size == 30000 == len(tokenizer.vocab)
    assert tokenizer.vocab[:5] == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    assert tokenizer.is_spm
    assert tokenizer.convert_ids_to_tokens([48, 25]) == ["▁this", "▁is"]
    assert tokenizer.convert_tokens_to_ids(["▁this", "no-such-piece"]) == [48, 1]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tokenizer.convert_ids_to_tokens([30000])


def test_preprocess_text_matches_the_original():
    assert preprocess_text("  Café\t\n Müller  ") == "cafe muller"
    assert preprocess_text("Café Müller", lower=False) == "Cafe Muller"
    # Python's whitespace (str.split) includes NBSP and the ASCII separators \x1c-\x1f.
    assert preprocess_text("a\u00a0\u3000b\x1cc") == "a b c"
    assert preprocess_text("a  b", remove_space=False) == "a  b"
    # No LaTeX-quote rewriting: that is XLNet/HF, not the original.
    assert preprocess_text("``Hi''") == "``hi''"
    assert preprocess_text("ΣΑΣ") == "σας"  # str.lower() handles the final sigma


def test_accents_capitals_and_whitespace(tokenizer):
    assert tokenizer.tokenize("Café Müller") == ["▁cafe", "▁muller"]
    assert tokenizer.tokenize("THIS Is   a\t\ttest ") == tokenizer.tokenize("this is a test")
    cased = AlbertTokenizer(spm_model_file=SPM_MODEL, do_lower_case=False)
    assert cased.tokenize("Hello") != tokenizer.tokenize("Hello")
    assert cased.tokenize("Café") == cased.sp_model.EncodeAsPieces("Cafe")  # accents always go


def test_digit_comma_rule_on_the_real_model(tokenizer):
    assert tokenizer.sp_model.EncodeAsPieces("in 1990, the") == ["▁in", "▁1990,", "▁the"]
    assert tokenizer.tokenize("in 1990, the") == ["▁in", "▁1990", ",", "▁the"]
    assert tokenizer.tokenize("x 10, 20, 30") == ["▁x", "▁10", ",", "▁20", ",", "▁30"]
    assert tokenizer.tokenize("1,000,000") == ["▁1", ",000,000"]
    assert tokenizer.tokenize("3.0, then") == ["▁3", ".", "0", ",", "▁then"]


def test_released_vocab_is_unaffected_by_the_python3_bug(tokenizer):
    # The original's bug only bites on digit-comma pieces without a leading "▁"; the released
    # 30k-clean vocabulary has 141 digit-comma pieces and every one starts with "▁".
    digit_commas = [p for p in tokenizer.vocab if len(p) > 1 and p[-1] == "," and p[-2].isdigit()]
    assert len(digit_commas) == 141
    assert all(piece.startswith("▁") for piece in digit_commas)


def test_released_vocab_was_trained_on_preprocessed_text(tokenizer):
    # Why train_sentencepiece lowercases and strips accents by default.
    pieces = tokenizer.vocab[5:]
    assert not any(char.isupper() for piece in pieces for char in piece)
    assert all(preprocess_text(piece, remove_space=False) == piece for piece in pieces)


class _ToyModel:
    """Stands in for a model that splits "1990," as "▁1 99 0,", the reference's example."""

    def EncodeAsPieces(self, text):  # pylint: disable=invalid-name
        return {"in 1990, the": ["▁in", "▁1", "99", "0,", "▁the"], "0": ["▁", "0"]}[text]


def test_digit_comma_rule_drops_a_lone_underline():
    # The reference example: intended output "▁in ▁1 99 0 , ▁the" (no stray "▁").
    assert encode_pieces(_ToyModel(), "in 1990, the") == ["▁in", "▁1", "99", "0", ",", "▁the"]


def huggingface_tokenizer(directory):
    """HF's `AlbertTokenizer` on our SentencePiece model. transformers 5 builds it from the vocabulary
    and character map of a `tokenizer.json` (its own conversion of a bare `spiece.model` needs a
    newer protobuf runtime than TensorFlow's), with its own normalization."""
    (directory / "tokenizer.json").write_text(tokenizer_json(SPM_MODEL), encoding="utf-8")
    return transformers.AlbertTokenizer.from_pretrained(directory)


@pytest.mark.slow
def test_matches_huggingface_tokenizer_on_real_text(tokenizer, tmp_path):
    reference = huggingface_tokenizer(tmp_path)
    lines = [line for line in shipped_text_lines() if "``" not in line and "''" not in line]
    differing = [
        line
        for line in lines
        if tokenizer.encode(line) != reference.convert_tokens_to_ids(reference.tokenize(line))
    ]
    # transformers 5's tokenizer (tokenizers' Unigram) has no digit-comma rule (its slow tokenizer
    # in 4.x had): the lines differ only where a digit meets a comma.
    odd = [line for line in differing if not any(a.isdigit() and b == "," for a, b in zip(line, line[1:]))]
    for line in odd[:20]:
        print("differs:", repr(line))
    assert len(lines) > 17000
    assert differing and not odd
    # The comparison exercises the digit-comma rule on real text, not just on examples.
    fired = [line for line in lines if tokenizer.tokenize(line) != tokenizer.sp_model.EncodeAsPieces(
        preprocess_text(line))]
    assert len(fired) > 100


def test_huggingface_differs_only_by_latex_quotes(tokenizer, tmp_path):
    reference = huggingface_tokenizer(tmp_path)
    text = "He said ``yes''."
    assert reference.tokenize(text) == tokenizer.tokenize('He said "yes".')
    assert tokenizer.tokenize(text) != tokenizer.tokenize('He said "yes".')


def test_truncate_seq_pair_trims_the_longer_from_the_end():
    first, second = list(range(6)), list(range(10, 13))
    truncate_seq_pair(first, second, 5)
    assert (first, second) == ([0, 1, 2], [10, 11])
    first, second = [1, 2], [3, 4]
    truncate_seq_pair(first, second, 3)
    assert (first, second) == ([1, 2], [3])


def test_bad_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="neither"):
        AlbertTokenizer()
    missing = str(tmp_path / "missing.model")
    with pytest.raises(ValueError, match="missing.model"):
        AlbertTokenizer(spm_model_file=missing)
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="garbage.model"):
        AlbertTokenizer(spm_model_file=str(garbage))
    empty_vocab = tmp_path / "vocab.txt"
    empty_vocab.write_text("\n")
    with pytest.raises(ValueError, match="vocab.txt"):
        AlbertTokenizer(vocab_file=str(empty_vocab))
    no_mask = tmp_path / "no_mask.txt"
    no_mask.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n")
    with pytest.raises(ValueError, match=r"no_mask.txt.*\[MASK\]"):
        AlbertTokenizer(vocab_file=str(no_mask))


WORDPIECE_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello",
                   ",", "!", "中", "国", "cafe", "run", "##ning", "##s"]


@pytest.fixture()
def wordpiece(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(WORDPIECE_VOCAB) + "\n", encoding="utf-8")
    return AlbertTokenizer(vocab_file=str(path))


def test_wordpiece_path(wordpiece):
    assert not wordpiece.is_spm
    assert (wordpiece.pad_id, wordpiece.unk_id, wordpiece.cls_id, wordpiece.sep_id, wordpiece.mask_id) == (
        0, 1, 2, 3, 4
    )
    assert wordpiece.tokenize("UNAFFABLE, hello!") == ["un", "##aff", "##able", ",", "hello", "!"]
    assert wordpiece.tokenize("Café running runs") == ["cafe", "run", "##ning", "run", "##s"]
    assert wordpiece.tokenize("中国x") == ["中", "国", "[UNK]"]
    assert wordpiece.tokenize("hello\x00\u200b \x07 unable xyz") == ["hello", "un", "##able", "[UNK]"]
    assert wordpiece.tokenize("run" + "s" * 200) == ["[UNK]"]  # longer than 200 characters
    assert wordpiece.encode("unaffable") == [5, 6, 7]


def test_wordpiece_reads_sentencepiece_vocab_format(tmp_path):
    path = tmp_path / "spm.vocab"
    lines = [f"{piece}\t-{i}.5\n" for i, piece in enumerate(WORDPIECE_VOCAB)]
    path.write_text("".join(lines), encoding="utf-8")
    cased = AlbertTokenizer(vocab_file=str(path), do_lower_case=False)
    assert cased.vocab == WORDPIECE_VOCAB
    assert cased.tokenize("Hello hello") == ["[UNK]", "hello"]
