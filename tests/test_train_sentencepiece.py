"""Vocabulary training: the original's settings, atomic outputs, a model the tokenizer can load."""

import os
import subprocess
import sys

import pytest
import sentencepiece as spm

from albert_tf.text.tokenization import AlbertTokenizer, load_vocab
from data_prep.train_sentencepiece import USER_DEFINED_SYMBOLS, train

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "data", "corpus", "sample.txt")


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The first 300 lines of the bundled corpus (blank separators included): trains in ~1 s."""
    path = tmp_path_factory.mktemp("corpus") / "small.txt"
    with open(CORPUS, encoding="utf-8") as handle:
        path.write_text("".join(handle.readlines()[:300]), encoding="utf-8")
    return str(path)


def _run_script(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run(
        [sys.executable, "-m", "albert_cli.train_sentencepiece", *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )


@pytest.mark.slow
def test_script_writes_a_model_the_tokenizer_loads(small_corpus, tmp_path):
    prefix = str(tmp_path / "tiny")
    result = _run_script(f"--input={small_corpus}", f"--model_prefix={prefix}", "--vocab_size=300",
                         "--num_threads=2")
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["tiny.model", "tiny.vocab"]  # no temporary leftovers

    tokenizer = AlbertTokenizer(spm_model_file=prefix + ".model")
    assert tokenizer.vocab_size == 300
    assert tokenizer.vocab[:5] == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (
        0, 1, 2, 3, 4
    )
    assert tokenizer.vocab[5:13] == USER_DEFINED_SYMBOLS
    assert tokenizer.sp_model.bos_id() == -1 and tokenizer.sp_model.eos_id() == -1
    assert all(tokenizer.sp_model.IsControl(i) for i in (0, 2, 3, 4))
    assert tokenizer.tokenize("(a) - b.")[:2] == ["▁", "("]  # user symbols stay single pieces
    assert tokenizer.encode("The house.") == tokenizer.encode("the house.")

    vocab = load_vocab(prefix + ".vocab")
    assert list(vocab) == tokenizer.vocab


def test_trained_on_preprocessed_text(small_corpus):
    uncased = spm.SentencePieceProcessor(model_proto=train([small_corpus], 300, num_threads=2))
    cased = spm.SentencePieceProcessor(model_proto=train([small_corpus], 300, do_lower_case=False,
                                                         num_threads=2))
    uncased_pieces = [uncased.IdToPiece(i) for i in range(5, 300)]
    cased_pieces = [cased.IdToPiece(i) for i in range(5, 300)]
    assert not any(char.isupper() for piece in uncased_pieces for char in piece)
    assert any(char.isupper() for piece in cased_pieces for char in piece)


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\n\xff\xfe not utf-8\n")
    result = _run_script(f"--input={bad}", f"--model_prefix={tmp_path / 'out'}", "--vocab_size=50")
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: --input {bad}: line 2 is not UTF-8 (invalid start byte)"]
    assert "Traceback" not in result.stderr
    assert not list(tmp_path.glob("out*"))
