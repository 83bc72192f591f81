"""A SentencePiece model whose own normalizer does ALBERT's text normalization, for runtimes that
run SentencePiece alone on raw text (MediaPipe Tasks' BERT preprocessing).

ALBERT's tokenizer (`tokenization.preprocess_text`) collapses whitespace, strips accents (NFKD,
combining marks dropped) and lowercases before SentencePiece, which then applies the model's own
character map (30k-clean: nmt_nfkc). A runtime that runs only the model sends "cliché" on as
"cliché", which 30k-clean's pieces do not cover (<unk>). The copy made here carries one map that
does both steps, composed rule by rule: every source of the model's map, and every code point our
normalization changes, maps to what the two steps make of it. Pieces and ids are the model's.

What no character map can express stays ours alone: the digit-comma rule of
`tokenization.encode_pieces` (a piece "▁2000," becomes "▁2000" ","), and compositions across
characters that a per-character rule cannot see (decomposed Hangul jamo).
"""

import functools
import unicodedata

import sentencepiece as spm

# ModelProto's field holding the NormalizerSpec (sentencepiece_model.proto).
_NORMALIZER_SPEC_FIELD = 3
_LENGTH_DELIMITED = 2


def _fold(text):
    """What `preprocess_text` does to a piece of text, whitespace as one space."""
    if text.isspace():
        return " "
    text = unicodedata.normalize("NFKD", text)
    return "".join(char for char in text if not unicodedata.combining(char)).lower()


def folded_normalizer_spec(model_proto):
    """The serialized NormalizerSpec of `model_proto` (bytes of a SentencePiece model) composed
    after ALBERT's normalization, with the model's whitespace options."""
    original = spm.SentencePieceNormalizer(model_proto=model_proto)
    bare = spm.SentencePieceNormalizer(model_proto=model_proto, add_dummy_prefix=False, escape_whitespaces=False,
                                       remove_extra_whitespaces=False)
    rules = {source: bare.normalize(_fold(source)) for source in _map_sources(original)}
    for code_point in range(0x110000):
        char = chr(code_point)
        if char in rules or 0xD800 <= code_point < 0xE000:  # surrogates are no characters
            continue
        folded = _fold(char)
        if folded != char and bare.normalize(folded) != char:
            rules[char] = bare.normalize(folded)
    spm.set_min_log_level(1)  # its builder's INFO lines ("Loading CharsMap of size=...") say nothing to a user
    try:
        return spm.SentencePieceNormalizer(
            norm_map=sorted(rules.items()), add_dummy_prefix=True, escape_whitespaces=True,
            remove_extra_whitespaces=True).serialized_normalizer_spec()
    finally:
        spm.set_min_log_level(0)  # sentencepiece's default (it has no getter)


def _map_sources(normalizer):
    """The sources of `normalizer`'s character map; none for a model trained without one
    (`--normalization_rule_name=identity`), where ALBERT's folding is the whole map."""
    try:
        return [source for source, _ in normalizer.decompile()]
    except RuntimeError as error:
        if "precompiled charsmap" not in str(error):
            raise
        return []


def _varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def read_varint(data, position):
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, position


@functools.lru_cache(maxsize=2)
def folded_model(model_proto):
    """`model_proto` (bytes of a SentencePiece model) with `folded_normalizer_spec` in place of
    its NormalizerSpec; every other field kept byte for byte. The wire format is edited directly:
    sentencepiece's generated protobuf classes need a newer protobuf runtime than TensorFlow's."""
    spec = folded_normalizer_spec(model_proto)
    out, position = bytearray(), 0
    while position < len(model_proto):
        tag, start = read_varint(model_proto, position)
        if tag & 7 != _LENGTH_DELIMITED:
            raise ValueError(f"not a SentencePiece model: field {tag >> 3} has wire type {tag & 7}")
        length, start = read_varint(model_proto, start)
        if tag >> 3 == _NORMALIZER_SPEC_FIELD:
            out += _varint(tag) + _varint(len(spec)) + spec
        else:
            out += model_proto[position:start + length]
        position = start + length
    return bytes(out)
