"""In-graph ALBERT text preprocessing (tensorflow-text): raw strings -> ids -> packed model inputs.

For tf.data pipelines and for SavedModels that take raw text (TF Serving). It reproduces
`albert_tf.text.tokenization.AlbertTokenizer` op by op, and tests hold it to the same ids. The
character classes (Python's whitespace and combining marks) are computed from Python's
`unicodedata` and baked into the graph, so a reloaded SavedModel needs no Python helpers.
"""

import functools
import sys
import unicodedata

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf.error_text import error_line
from albert_tf.preprocessors.graph_packing import concat_rows, type_id_rows
from albert_tf.preprocessors.packing import pair_kept_lengths, special_tokens
from albert_tf.text.tokenization import SPIECE_UNDERLINE

_SPECIAL_PIECES = {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}


def _re2_char_class(predicate):
    """An RE2 class `[...]` of every code point for which `predicate(char)` holds."""
    ranges = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF or not predicate(chr(code)):
            continue
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(
        f"\\x{{{low:X}}}" if low == high else f"\\x{{{low:X}}}-\\x{{{high:X}}}" for low, high in ranges
    )
    return f"[{body}]"


@functools.lru_cache(maxsize=None)
def _char_classes():
    """(whitespace, combining) classes matching `str.split` and `unicodedata.combining`."""
    return _re2_char_class(str.isspace), _re2_char_class(unicodedata.combining)


def _lower_utf8(text):
    """`str.lower()` in graph: ICU full lowercasing (final sigma included).

    `tf.strings.lower` stops at the first NUL byte, so it runs on the NUL-separated parts, and
    the NULs are put back as tensor values (a NUL in an op attribute would be cut off too).
    `tf_text.case_fold_utf8` is not used: it also NFKC-folds ("ß" -> "ss") and differs on
    thousands of code points (see docs/tokenization.md).
    """
    parts = tf.strings.split(text, sep="\x00")
    lowered = tf.strings.lower(parts.flat_values, encoding="utf-8")
    part_index = tf.range(tf.size(lowered, out_type=tf.int64))
    is_last_part = tf.equal(part_index + 1, tf.gather(parts.row_limits(), parts.value_rowids()))
    with_nul = tf.strings.join([lowered, tf.where(is_last_part, "", tf.constant(b"\x00"))])
    return tf.strings.reduce_join(parts.with_flat_values(with_nul), axis=-1)


def _starts_with_underline(pieces):
    return tf.equal(tf.strings.substr(pieces, 0, 1, unit="UTF8_CHAR"), SPIECE_UNDERLINE)


def _read_model_bytes(spm_model_file):
    try:
        with tf.io.gfile.GFile(spm_model_file, "rb") as handle:
            return handle.read()
    except (tf.errors.OpError, OSError) as error:
        raise ValueError(f"spm_model_file {spm_model_file!r} cannot be read: {error_line(error)}") from None


class AlbertTextTokenizer(keras.layers.Layer):
    """Strings [batch] -> ragged int32 ids [batch, (tokens)], the same ids as `AlbertTokenizer`.

    Normalises like `preprocess_text` (whitespace collapse, NFKD, combining marks dropped,
    lowercase when `do_lower_case`), runs SentencePiece, then applies the digit-comma rule.
    A scalar string gives a 1-D id tensor, so the layer can be mapped over unbatched datasets.
    The SentencePiece model travels with a SavedModel (and is also attached as the asset
    `spm_model_asset`, for tools that want the file itself).
    """

    def __init__(self, spm_model_file, do_lower_case=True, **kwargs):
        super().__init__(**kwargs)
        # Strings in, ragged ids out: keep Keras from converting or casting the inputs.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if not isinstance(spm_model_file, str) or not spm_model_file:
            raise ValueError(f"spm_model_file must be a path string, got {spm_model_file!r}")
        self.spm_model_file = spm_model_file
        self.do_lower_case = bool(do_lower_case)
        try:
            self._sentencepiece = tf_text.SentencepieceTokenizer(model=_read_model_bytes(spm_model_file))
            pieces = self._sentencepiece.id_to_string(tf.range(self._sentencepiece.vocab_size())).numpy()
        except tf.errors.OpError as error:
            raise ValueError(
                f"spm_model_file {spm_model_file!r} is not a loadable SentencePiece model: "
                f"{error_line(error)}"
            ) from None
        pieces = [piece.decode("utf-8") for piece in pieces]
        piece_ids = {piece: i for i, piece in enumerate(pieces)}
        missing = [piece for piece in _SPECIAL_PIECES.values() if piece not in piece_ids]
        if missing:
            raise ValueError(f"spm_model_file {spm_model_file!r} lacks the pieces {', '.join(missing)}")
        self.special_ids = {role: piece_ids[piece] for role, piece in _SPECIAL_PIECES.items()}
        # The digit-comma rule can only fire on these vocabulary pieces (an unknown piece never
        # holds the "," when "," is itself a piece), so it is decided per id, by lookup.
        self._is_digit_comma = tf.constant(
            [len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit() for piece in pieces]
        )
        self.spm_model_asset = tf.saved_model.Asset(spm_model_file)
        self._whitespace, self._combining = _char_classes()
        self.built = True

    @property
    def vocab_size(self):
        return int(self._sentencepiece.vocab_size())

    @property
    def pad_id(self):
        return self.special_ids["pad"]

    @property
    def cls_id(self):
        return self.special_ids["cls"]

    @property
    def sep_id(self):
        return self.special_ids["sep"]

    @property
    def mask_id(self):
        return self.special_ids["mask"]

    def call(self, inputs):
        text = tf.convert_to_tensor(inputs, dtype=tf.string)
        if text.shape.rank == 0:
            return self.call(text[tf.newaxis])[0]
        if text.shape.rank != 1:
            raise ValueError(f"AlbertTextTokenizer expects strings of shape [batch], got {text.shape}")
        return self._split_digit_commas(self._sentencepiece.tokenize(self._normalize(text)))

    def _normalize(self, text):
        """`tokenization.preprocess_text` in graph ops."""
        # Bad UTF-8 from a client becomes U+FFFD instead of failing the whole batch.
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace")
        text = tf.strings.regex_replace(text, f"^{self._whitespace}+|{self._whitespace}+$", "")
        text = tf.strings.regex_replace(text, f"{self._whitespace}+", " ")
        text = tf_text.normalize_utf8(text, "NFKD")
        text = tf.strings.regex_replace(text, self._combining, "")
        if self.do_lower_case:
            text = _lower_utf8(text)
        return text

    def _split_digit_commas(self, ids):
        """`tokenization.encode_pieces`' digit-comma rule on ragged ids [batch, (tokens)]."""
        flat = ids.flat_values
        is_digit_comma = tf.gather(self._is_digit_comma, flat)
        originals = self._sentencepiece.id_to_string(tf.boolean_mask(flat, is_digit_comma))
        digits = self._sentencepiece.tokenize(
            tf.strings.regex_replace(tf.strings.regex_replace(originals, ",$", ""), SPIECE_UNDERLINE, "")
        )
        # Inside a word ("a5,") the re-encoding must not start a new word: drop its leading "▁".
        first = digits[:, :1]
        first_pieces = self._sentencepiece.id_to_string(first.flat_values)
        drop_underline = tf.logical_and(
            _starts_with_underline(first_pieces),
            tf.gather(tf.logical_not(_starts_with_underline(originals)), first.value_rowids()),
        )
        first_pieces = tf.where(
            drop_underline, tf.strings.substr(first_pieces, 1, -1, unit="UTF8_CHAR"), first_pieces
        )
        first = tf.ragged.boolean_mask(
            first.with_flat_values(self._sentencepiece.string_to_id(first_pieces)),
            first.with_flat_values(tf.strings.length(first_pieces) > 0),
        )
        commas = tf.fill(tf.stack([tf.size(originals), 1]), self._sentencepiece.string_to_id(","))
        replacements = concat_rows([first, digits[:, 1:], tf.RaggedTensor.from_tensor(commas)])
        # Row i of `candidates` is [flat[i]]; rows N.. are the replacements, picked by gather.
        candidates = tf.concat([tf.RaggedTensor.from_tensor(flat[:, tf.newaxis]), replacements], axis=0)
        count = tf.size(flat, out_type=tf.int64)
        replacement_rows = count + tf.cumsum(tf.cast(is_digit_comma, tf.int64)) - 1
        rows = tf.where(is_digit_comma, replacement_rows, tf.range(count))
        return ids.with_flat_values(tf.gather(candidates, rows)).merge_dims(1, 2)

    def get_config(self):
        config = super().get_config()
        config.update({"spm_model_file": self.spm_model_file, "do_lower_case": self.do_lower_case})
        return config


class AlbertInputPacker(keras.layers.Layer):
    """Ragged ids of one or two segments -> `[CLS] A [SEP] (B [SEP])`, the encoder's three inputs.

    The layout and truncation are `albert_tf.preprocessors.packing`'s, the rules the Python feature
    builders use: pairs as the original GLUE code (trim the longer segment from its end, the second
    one on ties); single segments keep their first `seq_length - 2` ids. With `seq_length=None` the
    batch is padded only to its longest row, and `max_seq_length` caps the length (dynamic padding
    saves work on short batches).
    Returns int32 `input_word_ids`, `input_mask` and `input_type_ids` of shape [batch, length].
    """

    def __init__(self, seq_length, cls_id, sep_id, pad_id=0, max_seq_length=None, **kwargs):
        super().__init__(**kwargs)
        # Ragged ids in (not a backend tensor on JAX or PyTorch): keep Keras from converting them.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if (seq_length is None) == (max_seq_length is None):
            raise ValueError(
                "AlbertInputPacker needs exactly one of seq_length (fixed padding) or "
                f"max_seq_length (pad to the longest row, capped); got seq_length={seq_length}, "
                f"max_seq_length={max_seq_length}"
            )
        limit = seq_length if seq_length is not None else max_seq_length
        if not isinstance(limit, int) or limit < 3:
            raise ValueError(
                f"the sequence length must be an integer >= 3 (room for [CLS] A [SEP]), got {limit!r}"
            )
        for name, value in (("cls_id", cls_id), ("sep_id", sep_id), ("pad_id", pad_id)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer token id, got {value!r}")
        self.seq_length = seq_length
        self.max_seq_length = max_seq_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.pad_id = pad_id
        self.built = True

    def call(self, inputs):
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not 1 <= len(segments) <= 2:
            raise ValueError(f"AlbertInputPacker takes one or two segments, got {len(segments)}")
        for segment in segments:
            if not isinstance(segment, tf.RaggedTensor) or segment.shape.rank != 2:
                raise ValueError(
                    "AlbertInputPacker expects tf.RaggedTensor ids of shape [batch, (tokens)], "
                    f"got {segment!r}"
                )
        segments = [tf.cast(segment, tf.int32) for segment in segments]
        limit = self.seq_length if self.seq_length is not None else self.max_seq_length
        segments = _truncate_segments(segments, limit - special_tokens(len(segments)))
        word_ids, type_ids = type_id_rows(segments, self.cls_id, self.sep_id)
        shape = None if self.seq_length is None else [None, self.seq_length]
        return {
            "input_word_ids": word_ids.to_tensor(default_value=self.pad_id, shape=shape),
            "input_mask": tf.ones_like(word_ids).to_tensor(default_value=0, shape=shape),
            "input_type_ids": type_ids.to_tensor(default_value=0, shape=shape),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "seq_length": self.seq_length,
                "cls_id": self.cls_id,
                "sep_id": self.sep_id,
                "pad_id": self.pad_id,
                "max_seq_length": self.max_seq_length,
            }
        )
        return config


def _truncate_segments(segments, budget):
    """Keeps at most `budget` ids per row in total (`packing.pair_kept_lengths`, the original's rule)."""
    if len(segments) == 1:
        return [segments[0][:, :budget]]
    first, second = segments
    keep_first, keep_second = pair_kept_lengths(tf.cast(first.row_lengths(), tf.int64),
                                                tf.cast(second.row_lengths(), tf.int64),
                                                tf.constant(budget, tf.int64), tf.minimum, tf.maximum)
    return [_keep_first_n(first, keep_first), _keep_first_n(second, keep_second)]


def _keep_first_n(ids, counts):
    positions = tf.ragged.range(ids.row_lengths())
    return tf.ragged.boolean_mask(ids, positions < tf.cast(counts, positions.dtype)[:, tf.newaxis])
