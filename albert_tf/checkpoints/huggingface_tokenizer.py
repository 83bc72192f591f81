"""The `tokenizer.json` of an HF ALBERT checkpoint, written from the SentencePiece model.

transformers 5 loads tokenizers from `tokenizer.json` alone; from a bare `spiece.model` it must
convert, which needs a protobuf runtime newer than TensorFlow's (so it fails beside TensorFlow).
The file written here is what that conversion makes of an ALBERT model (HF's `AlbertTokenizer`:
LaTeX quotes to '"', NFKD, accents stripped, lowercased, then the model's own character map;
Metaspace pieces; `[CLS] A [SEP] B [SEP]`), built with Hugging Face's `tokenizers`.
"""

import sentencepiece as spm

from albert_tf.text.folded_sentencepiece import read_varint

TOKENIZER_JSON = "tokenizer.json"
# NormalizerSpec's field holding the precompiled character map (sentencepiece_model.proto).
_PRECOMPILED_CHARSMAP_FIELD = 2


def _precompiled_charsmap(model_proto):
    """The model's precompiled character map (bytes; empty for a model without one)."""
    spec = spm.SentencePieceNormalizer(model_proto=model_proto).serialized_normalizer_spec()
    position = 0
    while position < len(spec):
        tag, position = read_varint(spec, position)
        if tag & 7 == 0:
            _, position = read_varint(spec, position)
            continue
        length, position = read_varint(spec, position)
        if tag >> 3 == _PRECOMPILED_CHARSMAP_FIELD:
            return spec[position:position + length]
        position += length
    return b""


def tokenizer_json(spm_model_file, do_lower_case=True):
    """The text of `tokenizer.json` for the SentencePiece model `spm_model_file`."""
    try:
        from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors  # pylint: disable=g-import-not-at-top
        from tokenizers.models import Unigram  # pylint: disable=g-import-not-at-top
    except ImportError:
        raise ValueError("writing an HF tokenizer needs tokenizers: pip install tokenizers") from None
    with open(spm_model_file, "rb") as handle:
        model_proto = handle.read()
    model = spm.SentencePieceProcessor(model_proto=model_proto)
    vocab = [(model.id_to_piece(index), model.get_score(index)) for index in range(model.get_piece_size())]
    tokenizer = Tokenizer(Unigram(vocab, unk_id=model.unk_id(), byte_fallback=False))
    steps = [normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
             normalizers.StripAccents()] + ([normalizers.Lowercase()] if do_lower_case else [])
    charsmap = _precompiled_charsmap(model_proto)
    if charsmap:
        steps.append(normalizers.Precompiled(charsmap))
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    cls, sep = model.piece_to_id("[CLS]"), model.piece_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tokenizer.add_special_tokens([model.id_to_piece(index) for index in range(model.get_piece_size())
                                  if model.is_control(index) or model.is_unknown(index)])
    return tokenizer.to_str()
