"""The in-graph tokenizer and packer: same ids as the Python tokenizer, and they survive a SavedModel."""

import io
import itertools
import os
import subprocess
import sys
import textwrap
import unicodedata

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf.text.preprocessing import AlbertInputPacker, AlbertTextTokenizer, _lower_utf8
from albert_tf.text.tokenization import AlbertTokenizer, truncate_seq_pair
from test_tokenization import SPM_MODEL, shipped_text_lines

TRICKY_TEXTS = [
    "",
    "   \t\n ",
    "in 1990, the 1,000,000 people; 3.0, then x 10, 20, 30",
    "Café Müller ΣΑΣ ΟΔΟΣ İSTANBUL Straße ǅ ᾈ Ⅻ ﬁ",
    "emoji 😀👍🏽 and CJK 中文字 and Hangul 한국어",
    "combining e\u0301 a\u0308 \u034f \u0e31 thai",
    "control \x00 \x07 \x1c\x1d \x7f \u200b \ufeff nul\x00inside",
    "NBSP\u00a0and\u3000ideographic\u2028line",
    "``LaTeX quotes''",
    "[CLS] [MASK] <pad> <unk>",
    "١٢٣, ٤ arabic digits, ² superscript, ①, circled",
]


@pytest.fixture(scope="module")
def python_tokenizer():
    return AlbertTokenizer(spm_model_file=SPM_MODEL)


@pytest.fixture(scope="module")
def graph_tokenizer():
    return AlbertTextTokenizer(SPM_MODEL)


@pytest.mark.slow
def test_same_ids_as_python_on_all_shipped_text(python_tokenizer, graph_tokenizer):
    lines = shipped_text_lines()
    graph_ids = []
    for start in range(0, len(lines), 2048):
        graph_ids.extend(graph_tokenizer(lines[start:start + 2048]).to_list())
    differing = [line for line, ids in zip(lines, graph_ids) if ids != python_tokenizer.encode(line)]
    for line in differing:
        print("differs:", repr(line))
    assert len(lines) > 17000
    assert len(differing) <= 0.001 * len(lines)


def test_same_ids_on_tricky_text(python_tokenizer, graph_tokenizer):
    graph_ids = graph_tokenizer(TRICKY_TEXTS).to_list()
    for text, ids in zip(TRICKY_TEXTS, graph_ids):
        assert ids == python_tokenizer.encode(text), repr(text)
    assert graph_ids[0] == [] and graph_ids[1] == []
    assert graph_ids[0] == [] and graph_ids[1] == []


@pytest.fixture(scope="module")
def digit_comma_model(tmp_path_factory):
    """A tiny model whose vocabulary has digit-comma pieces without "▁" ("0,", "5,"): the
    released vocabulary has none, so only such a model exercises the rule's "▁" handling."""
    random = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "the", "in", "year", "and"]
    lines = [" ".join(str(random.integers(2000)) if random.random() < 0.3 else random.choice(words)
                      for _ in range(12)) for _ in range(300)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=60,
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        user_defined_symbols=["0,", "5,", "▁7,"], hard_vocab_limit=False, num_threads=1, minloglevel=2,
    )
    path = tmp_path_factory.mktemp("toy") / "digit_comma.model"
    path.write_bytes(model.getvalue())
    return str(path)


def test_digit_comma_underline_handling_in_both_tokenizers(digit_comma_model):
    python_tokenizer = AlbertTokenizer(spm_model_file=digit_comma_model)
    raw = python_tokenizer.sp_model.EncodeAsPieces
    assert "0," in raw("in 1990, the") and "5," in raw("x 5, y") and "▁7," in raw("70, 7,")
    assert "▁0" not in python_tokenizer.vocab  # so "0" re-encodes as "▁" "0"
    # A lone "▁" from re-encoding "0" is dropped; "▁5" loses its "▁"; "▁7," keeps its word start.
    assert python_tokenizer.tokenize("in 1990, the")[-3:] == ["0", ",", "▁the"]
    assert python_tokenizer.tokenize("x 5, y")[-4:] == ["5", ",", "▁", "y"]
    assert python_tokenizer.tokenize("70, 7,")[-3:] == ["▁", "7", ","]
    texts = ["in 1990, the", "x 5, y", "70, 7,", "1,000,000, ok", "a5, b 15, c", ""]
    graph_ids = AlbertTextTokenizer(digit_comma_model)(texts).to_list()
    assert graph_ids == [python_tokenizer.encode(text) for text in texts]


def test_do_lower_case_false_matches_python():
    cased_python = AlbertTokenizer(spm_model_file=SPM_MODEL, do_lower_case=False)
    cased_graph = AlbertTextTokenizer(SPM_MODEL, do_lower_case=False)
    for text, ids in zip(TRICKY_TEXTS, cased_graph(TRICKY_TEXTS).to_list()):
        assert ids == cased_python.encode(text), repr(text)


@pytest.mark.slow
def test_lowercasing_matches_str_lower_on_almost_every_code_point():
    # Measured: ICU lowercasing differs from Python 3.11's str.lower only on code points that
    # TF's ICU does not know yet (Unicode 14 additions); case_fold_utf8 would differ on ~9400.
    texts = ["A" + chr(code) + "b" for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    lowered = [value.decode("utf-8") for value in _lower_utf8(tf.constant(texts)).numpy()]
    differing = [text for text, low in zip(texts, lowered) if text.lower() != low]
    for text in differing:
        print(f"U+{ord(text[1]):04X}", repr(text.lower()))
    assert len(differing) <= 40
    assert all(ord(text[1]) >= 0x2C00 for text in differing)  # Latin, Greek, Cyrillic... all agree
    folded = [value.decode("utf-8") for value in tf_text.case_fold_utf8(tf.constant(texts)).numpy()]
    assert sum(text.lower() != fold for text, fold in zip(texts, folded)) > 9000


@pytest.mark.slow
def test_nfkd_matches_python_outside_recent_unicode():
    # tf-text's ICU knows newer Unicode than Python 3.11 (14.0): only those code points differ.
    texts = ["A" + chr(code) + "b" for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    normalized = tf_text.normalize_utf8(tf.constant(texts), "NFKD").numpy()
    normalized = [value.decode("utf-8") for value in normalized]
    differing = [text for text, norm in zip(texts, normalized) if unicodedata.normalize("NFKD", text) != norm]
    assert len(differing) <= 150
    assert all(ord(text[1]) >= 0x10000 for text in differing)  # none in the Basic Multilingual Plane


def test_very_long_and_scalar_inputs(python_tokenizer, graph_tokenizer):
    long_text = "The quick brown fox, 1,234, jumps. " * 2000
    assert graph_tokenizer([long_text]).to_list()[0] == python_tokenizer.encode(long_text)
    # A run of one letter has many equal-score segmentations; only the tie-break may differ.
    repeated = "x" * 5000
    assert len(graph_tokenizer([repeated])[0]) == len(python_tokenizer.encode(repeated))
    scalar = graph_tokenizer(tf.constant("This is a test"))
    assert scalar.shape.rank == 1 and scalar.numpy().tolist() == [48, 25, 21, 1289]


def test_invalid_utf8_is_replaced_not_fatal(graph_tokenizer):
    ids = graph_tokenizer(tf.constant([b"ok \xff\xfe bytes"])).to_list()[0]
    assert ids == AlbertTokenizer(spm_model_file=SPM_MODEL).encode("ok \ufffd\ufffd bytes")


def test_works_in_tf_data(python_tokenizer, graph_tokenizer):
    texts = ["Hello, World!", "in 1990, the"]
    dataset = tf.data.Dataset.from_tensor_slices(texts).map(graph_tokenizer)
    assert [ids.numpy().tolist() for ids in dataset] == [python_tokenizer.encode(t) for t in texts]


def test_tokenizer_config_round_trip(graph_tokenizer):
    config = graph_tokenizer.get_config()
    assert config["spm_model_file"] == SPM_MODEL and config["do_lower_case"] is True
    clone = AlbertTextTokenizer.from_config(config)
    assert clone(["Hello"]).to_list() == graph_tokenizer(["Hello"]).to_list()
    assert (clone.pad_id, clone.cls_id, clone.sep_id, clone.mask_id, clone.vocab_size) == (0, 2, 3, 4, 30000)


def test_bad_model_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="missing.model"):
        AlbertTextTokenizer(str(tmp_path / "missing.model"))
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="garbage.model"):
        AlbertTextTokenizer(str(garbage))


def test_pair_truncation_agrees_with_python():
    # Every length pair up to 9 x 9 against every budget: the packer and the loop must agree.
    lengths = list(itertools.product(range(10), range(10)))
    first = tf.ragged.constant([list(range(100, 100 + a)) for a, _ in lengths], dtype=tf.int32)
    second = tf.ragged.constant([list(range(200, 200 + b)) for _, b in lengths], dtype=tf.int32)
    for seq_length in range(3, 16):
        packed = AlbertInputPacker(seq_length, cls_id=2, sep_id=3)((first, second))
        word_ids, type_ids, mask = (packed[name].numpy().tolist() for name in
                                    ("input_word_ids", "input_type_ids", "input_mask"))
        for row, (a, b) in enumerate(lengths):
            tokens_a, tokens_b = list(range(100, 100 + a)), list(range(200, 200 + b))
            truncate_seq_pair(tokens_a, tokens_b, seq_length - 3)
            expected = [2] + tokens_a + [3] + tokens_b + [3]
            expected_types = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            padding = seq_length - len(expected)
            assert word_ids[row] == expected + [0] * padding
            assert type_ids[row] == expected_types + [0] * padding
            assert mask[row] == [1] * len(expected) + [0] * padding


def test_single_segment_and_dynamic_padding():
    ids = tf.ragged.constant([[10, 11, 12, 13, 14], [20]], dtype=tf.int32)
    fixed = AlbertInputPacker(5, cls_id=2, sep_id=3, pad_id=0)(ids)
    assert fixed["input_word_ids"].numpy().tolist() == [[2, 10, 11, 12, 3], [2, 20, 3, 0, 0]]
    assert fixed["input_type_ids"].numpy().tolist() == [[0] * 5, [0] * 5]
    assert fixed["input_word_ids"].dtype == tf.int32
    dynamic = AlbertInputPacker(None, cls_id=2, sep_id=3, max_seq_length=64)
    short = dynamic(tf.ragged.constant([[7], [8, 9]], dtype=tf.int32))
    assert short["input_word_ids"].numpy().tolist() == [[2, 7, 3, 0], [2, 8, 9, 3]]
    capped = AlbertInputPacker(None, cls_id=2, sep_id=3, max_seq_length=4)(ids)
    assert capped["input_mask"].numpy().tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]


def test_packer_validates_and_round_trips_config():
    with pytest.raises(ValueError, match="exactly one of seq_length"):
        AlbertInputPacker(None, cls_id=2, sep_id=3)
    with pytest.raises(ValueError, match=">= 3"):
        AlbertInputPacker(2, cls_id=2, sep_id=3)
    with pytest.raises(ValueError, match="sep_id"):
        AlbertInputPacker(8, cls_id=2, sep_id=-1)
    packer = AlbertInputPacker(8, cls_id=2, sep_id=3, pad_id=0)
    with pytest.raises(ValueError, match="one or two segments"):
        packer((tf.ragged.constant([[1]]),) * 3)
    clone = AlbertInputPacker.from_config(packer.get_config())
    assert (clone.seq_length, clone.cls_id, clone.sep_id, clone.pad_id) == (8, 2, 3, 0)


class _Preprocessor(tf.Module):
    """Raw text pairs -> packed model inputs, as an exported serving model would hold them."""

    def __init__(self, spm_model_file, seq_length):
        super().__init__()
        self.tokenizer = AlbertTextTokenizer(spm_model_file)
        self.packer = AlbertInputPacker(
            seq_length,
            cls_id=self.tokenizer.cls_id,
            sep_id=self.tokenizer.sep_id,
            pad_id=self.tokenizer.pad_id,
        )

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
    def __call__(self, first, second):
        return self.packer((self.tokenizer(first), self.tokenizer(second)))


@pytest.mark.slow
def test_saved_model_reloads_with_only_tensorflow_and_tensorflow_text(tmp_path):
    export_dir = str(tmp_path / "preprocessor")
    module = _Preprocessor(SPM_MODEL, seq_length=24)
    tf.saved_model.save(module, export_dir)
    assert os.path.exists(os.path.join(export_dir, "assets", "30k-clean.model"))
    first = ["Hello, World!", "in 1990, the Café", "", "😀 中文 e\u0301"]
    second = ["this is a test", "", "x 10, 20, 30", "ΣΑΣ"]
    outputs = module(tf.constant(first), tf.constant(second))
    expected = {name: value.numpy() for name, value in outputs.items()}
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import tensorflow as tf
        import tensorflow_text  # registers the SentencePiece ops
        loaded = tf.saved_model.load({export_dir!r})
        outputs = loaded(tf.constant({first!r}), tf.constant({second!r}))
        np.savez(sys.argv[1], **{{name: value.numpy() for name, value in outputs.items()}})
        assert "albert_tf" not in sys.modules
        """
    )
    result_path = str(tmp_path / "reloaded.npz")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH="")
    subprocess.run([sys.executable, "-c", script, result_path], check=True, env=env, cwd=str(tmp_path))
    reloaded = np.load(result_path)
    assert set(reloaded.files) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(reloaded[name], value)
    assert expected["input_word_ids"][0, 0] == 2
