"""Input handling: globs and comma lists, byte-range chunks, document breaks, WordPiece input."""

import pytest

from albert_tf.text.tokenization import AlbertTokenizer
from data_prep import corpus
from data_prep.create_pretraining_data import build
from data_prep.file_access import LocalFiles
from data_prep.pretraining_stats import PretrainingStats

SPM_MODEL = "data/albert_spm/30k-clean.model"
CORPUS = "data/corpus/sample.txt"
SEQUENCE_TOKENS = 125  # the tokens of a 128-token sequence (less [CLS] and two [SEP]): longer lines are counted


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(spm_model_file=SPM_MODEL)


@pytest.mark.parametrize("chunk_bytes", [1024, 1500, 65536, 10**7])
def test_chunks_partition_the_lines_of_a_file(chunk_bytes):
    files = LocalFiles()
    with open(CORPUS, "rb") as handle:
        lines = handle.read(200_000).splitlines(keepends=True)[:-1]  # the last one is cut
    chunks = corpus.plan_chunks([CORPUS], files, chunk_bytes)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert chunks[-1].end == files.size(CORPUS)
    read = []
    for chunk in chunks:
        with open(CORPUS, "rb") as handle:
            read.extend(corpus.chunk_lines(handle, chunk))
        if len(read) >= len(lines):
            break
    assert read[:len(lines)] == lines  # every line exactly once, in order


def test_input_patterns_expand_globs_and_comma_lists(tmp_path):
    for name in ("b.txt", "a.txt", "c.md"):
        (tmp_path / name).write_text("some text\n")
    (tmp_path / "dir.txt").mkdir()
    paths = corpus.expand_input_patterns(f"{tmp_path}/*.txt, {tmp_path}/c.md", LocalFiles())
    assert paths == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(tmp_path / "c.md")]
    with pytest.raises(FileNotFoundError, match=r"--input_file: '.*missing\.txt' matches no file"):
        corpus.expand_input_patterns(f"{tmp_path}/a.txt,{tmp_path}/missing.txt", LocalFiles())


def test_documents_break_at_blank_lines_chunk_borders_and_file_ends(tmp_path, tokenizer):
    text = "First line of one.\r\nSecond line of one.\n \t\nOnly line of two.\n\u0301\u0301\nFirst of three.\n"
    path = tmp_path / "docs.txt"
    path.write_text(text, encoding="utf-8", newline="")
    files = LocalFiles()
    whole = corpus.Chunk(0, str(path), 0, files.size(str(path)))
    stats = PretrainingStats()
    documents = corpus.read_documents(files, whole, tokenizer, stats, SEQUENCE_TOKENS)
    # A line of combining marks only is empty once accents are stripped: a break, as in the original.
    assert [len(document) for document in documents] == [2, 1, 1]
    assert documents[0][0].tolist() == tokenizer.encode("First line of one.")
    assert stats.counts["documents"] == 3 and stats.counts["lines"] == 6
    split_at = len(text[:text.index("Second")].encode("utf-8"))
    first, second = corpus.Chunk(0, str(path), 0, split_at), corpus.Chunk(1, str(path), split_at, whole.end)
    pieces = [corpus.read_documents(files, c, tokenizer, PretrainingStats(), SEQUENCE_TOKENS) for c in (first, second)]
    assert [len(d) for d in pieces[0]] == [1] and [len(d) for d in pieces[1]] == [1, 1, 1]


def test_documents_count_once_however_chunk_borders_split_them(tmp_path, tokenizer):
    # Documents of 1-40 lines, two blank lines between some, a blank-once-normalised line between
    # others: wherever the borders fall (on a blank line, inside a line, inside a document), the
    # count is the input's, not one more per border that splits a document.
    lines_per_document = [1, 40, 3, 25, 2, 1, 30]
    separators = ["\n", "\n\n", "\u0301\n", "\n"]
    text = "".join(
        "".join(f"Sentence {line} of document {index}, with some words.\n" for line in range(count))
        + separators[index % len(separators)]
        for index, count in enumerate(lines_per_document))
    path = tmp_path / "docs.txt"
    path.write_text(text, encoding="utf-8")
    files = LocalFiles()
    for chunk_bytes in range(1024, 2200, 37):
        stats = PretrainingStats()
        pieces = [corpus.read_documents(files, chunk, tokenizer, stats, SEQUENCE_TOKENS)
                  for chunk in corpus.plan_chunks([str(path)], files, chunk_bytes)]
        assert stats.counts["documents"] == len(lines_per_document), chunk_bytes
        assert sum(len(document) for piece in pieces for document in piece) == sum(lines_per_document)


def test_wordpiece_vocabulary_builds_whole_word_units(tmp_path):
    words = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "away", "play", ".", ","]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, "##s", "##ing", "##ed"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    sentence = "The cats sat on the mat playing. The dog played far away, the cat ran.\n"
    (tmp_path / "corpus.txt").write_text((sentence * 3 + "\n") * 4)
    result = build(input_file=str(tmp_path / "corpus.txt"), output_file=str(tmp_path / "out"),
                   vocab_file=str(tmp_path / "vocab.txt"), max_seq_length=48, dupe_factor=5,
                   max_predictions_per_seq=8, num_workers=1, show_progress=False)
    stats = result["stats"]
    assert stats["instances"] > 0 and stats["settings"]["vocab_file"].endswith("vocab.txt")
    assert stats["raw"]["ngram_masked"]  # units were found and masked
