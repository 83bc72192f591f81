"""data_prep.split_corpus: sentences per line, and a held-out tail of every document."""

import pytest

from data_prep.split_corpus import split_corpus, split_sentences


def test_sentences_end_at_punctuation_before_a_capital_but_not_after_titles():
    assert split_sentences('He met Mr. Knightley. "Yes!" she said. It was 3 p.m. and dark? 12 men came.') == [
        "He met Mr. Knightley.", '"Yes!" she said.', "It was 3 p.m. and dark?", "12 men came."]
    assert split_sentences("No end here, e.g. this one") == ["No end here, e.g. this one"]


def test_the_tail_of_every_document_is_held_out(tmp_path):
    corpus = tmp_path / "books.txt"
    book_a = [f"A{i} one. A{i} two." for i in range(10)]
    book_b = ["B0 one.", "B1 one. B1 two."]
    corpus.write_text("\n".join(book_a) + "\n\n" + "\n".join(book_b) + "\n")
    counts = split_corpus(str(corpus), str(tmp_path / "out"), heldout_fraction=0.2)
    assert counts == {"documents": 2, "train": 16 + 1, "heldout": 4 + 2}
    train = (tmp_path / "out" / "train.txt").read_text()
    heldout = (tmp_path / "out" / "heldout.txt").read_text()
    assert train == "\n".join(s for i in range(8) for s in (f"A{i} one.", f"A{i} two.")) + "\n\nB0 one.\n"
    assert heldout == "A8 one.\nA8 two.\nA9 one.\nA9 two.\n\nB1 one.\nB1 two.\n"


def test_plain_text_books_one_document_per_file(tmp_path):
    (tmp_path / "b.txt").write_text("Second book. It\nwraps.\n\n\nLast paragraph.\n")
    (tmp_path / "a.txt").write_text("First book, first\nparagraph.\n\nIts end.\n")
    counts = split_corpus(str(tmp_path / "*.txt"), str(tmp_path / "out"), 0.1, one_document_per_file=True)
    assert counts == {"documents": 2, "train": 3, "heldout": 2}
    assert (tmp_path / "out" / "train.txt").read_text() == (
        "First book, first paragraph.\n\nSecond book.\nIt wraps.\n")
    assert (tmp_path / "out" / "heldout.txt").read_text() == "Its end.\n\nLast paragraph.\n"


def test_bad_input_names_the_flag(tmp_path):
    with pytest.raises(FileNotFoundError, match="--input_file"):
        split_corpus(str(tmp_path / "missing.txt"), str(tmp_path / "out"), 0.1)
    corpus = tmp_path / "one_line.txt"
    corpus.write_text("Only one paragraph.\n")
    with pytest.raises(ValueError, match="at least 2"):
        split_corpus(str(corpus), str(tmp_path / "out"), 0.1)
    with pytest.raises(ValueError, match="--heldout_fraction"):
        split_corpus(str(corpus), str(tmp_path / "out"), 1.5)
