"""ALBERT's Python tokenizer: SentencePiece for the English releases, WordPiece for the Chinese ones.

One object owns its normalisation (whitespace collapse, NFKD accent stripping, lowercasing), so
callers cannot forget it (google-research/albert #88: the original ignored `do_lower_case` when a
SentencePiece model was given). The in-graph twin lives in `text_preprocessing.py` and is tested
to give the same ids.
"""

import collections
import unicodedata

import sentencepiece as spm

from albert_tf.io_utils import special_file_kind
from albert_tf.preprocessors.packing import pair_kept_lengths

SPIECE_UNDERLINE = "\u2581"
WORDPIECE_MAX_CHARS = 200


def preprocess_text(text, lower=True, remove_space=True):
    """The original's normalisation: collapse whitespace, strip accents (always), lowercase.

    Accents are removed with NFKD followed by dropping every character with a non-zero canonical
    combining class, exactly as google-research/albert does. LaTeX quotes (`` and '') are kept:
    rewriting them is an XLNet/HuggingFace addition the original never had.
    """
    if remove_space:
        text = " ".join(text.strip().split())
    if not text.isascii():  # NFKD and the combining-mark filter leave ASCII unchanged
        text = unicodedata.normalize("NFKD", text)
        text = "".join(char for char in text if not unicodedata.combining(char))
    if lower:
        text = text.lower()
    return text


def encode_pieces(sp_model, text, sample=False):
    """SentencePiece pieces with the original's digit-comma rule, as it was meant to work.

    A piece such as "0," (digit then comma) is re-encoded without the comma and the comma becomes
    its own piece, so numbers tokenize the same whether or not a comma follows. The original
    compared against a bytes "▁" under Python 3 and so left a stray "▁" piece in front of the
    digits; we implement the intended behaviour (which HuggingFace's AlbertTokenizer also has).
    With the released 30k-clean vocabulary the two agree, as all its digit-comma pieces start
    with "▁"; they differ only for vocabularies with pieces such as "0,".
    """
    if sample:
        pieces = sp_model.SampleEncodeAsPieces(text, 64, 0.1)
    else:
        pieces = sp_model.EncodeAsPieces(text)
    result = []
    for piece in pieces:
        if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
            digits = sp_model.EncodeAsPieces(piece[:-1].replace(SPIECE_UNDERLINE, ""))
            if piece[0] != SPIECE_UNDERLINE and digits and digits[0][0] == SPIECE_UNDERLINE:
                if len(digits[0]) == 1:
                    digits = digits[1:]
                else:
                    digits[0] = digits[0][1:]
            result.extend(digits)
            result.append(piece[-1])
        else:
            result.append(piece)
    return result


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Trims two lists in place to `max_length` in total, as the original GLUE code: one token at a
    time from the longer, the second one on ties (`packing.pair_kept_lengths`, the rule the in-graph
    packer applies too), so a long pair keeps proportionally more of the shorter segment."""
    keep_a, keep_b = pair_kept_lengths(len(tokens_a), len(tokens_b), max_length)
    del tokens_a[keep_a:]
    del tokens_b[keep_b:]


def _read_bytes(path):
    """Reads a local file, or a remote one (gs://...) through tf.io.gfile when TF is available."""
    if "://" in path:
        import tensorflow as tf  # pylint: disable=g-import-not-at-top

        with tf.io.gfile.GFile(path, "rb") as handle:
            return handle.read()
    with open(path, "rb") as handle:
        return handle.read()


def _load_sentencepiece(spm_model_file):
    kind = special_file_kind(spm_model_file)
    if kind:
        raise ValueError(f"spm_model_file {spm_model_file!r} is {kind}, not a regular file; expected a "
                         "SentencePiece .model file")
    try:
        model_bytes = _read_bytes(spm_model_file)
        processor = spm.SentencePieceProcessor()
        processor.LoadFromSerializedProto(model_bytes)
    except Exception as error:  # sentencepiece raises RuntimeError/OSError, gfile its own types
        raise ValueError(
            f"spm_model_file {spm_model_file!r} is not a loadable SentencePiece model: {error}"
        ) from None
    return processor


def load_vocab(vocab_file):
    """Reads a BERT `vocab.txt` or a SentencePiece `.vocab` ("piece<TAB>score"): first field per line."""
    try:
        text = _read_bytes(vocab_file).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"vocab_file {vocab_file!r} cannot be read as UTF-8 text: {error}") from None
    vocab = collections.OrderedDict()
    for line in text.splitlines():
        fields = line.strip().split()
        if fields and fields[0] not in vocab:
            vocab[fields[0]] = len(vocab)
    if not vocab:
        raise ValueError(f"vocab_file {vocab_file!r} holds no tokens (expected one token per line)")
    return vocab


class AlbertTokenizer:
    """Text -> pieces -> ids, with ALBERT's normalisation built in.

    Give `spm_model_file` for the SentencePiece vocabularies (all English releases), or only
    `vocab_file` for a WordPiece vocabulary (the Chinese releases). No [CLS]/[SEP] are added here:
    packing is the job of the feature builders and `AlbertInputPacker`.
    """

    def __init__(self, spm_model_file=None, do_lower_case=True, vocab_file=None):
        if not spm_model_file and not vocab_file:
            raise ValueError(
                "AlbertTokenizer needs spm_model_file (a SentencePiece .model) or vocab_file "
                "(a WordPiece vocab.txt); neither was given"
            )
        self.do_lower_case = do_lower_case
        self.spm_model_file = spm_model_file or None
        self.vocab_file = vocab_file or None
        if self.spm_model_file:
            self.sp_model = _load_sentencepiece(spm_model_file)
            self.vocab = [self.sp_model.IdToPiece(i) for i in range(self.sp_model.GetPieceSize())]
            self._piece_to_id = {piece: i for i, piece in enumerate(self.vocab)}
            self._wordpiece = None
            source, special_pieces = spm_model_file, {
                "pad": ("<pad>",), "unk": ("<unk>",), "cls": ("[CLS]",), "sep": ("[SEP]",),
                "mask": ("[MASK]",),
            }
        else:
            self.sp_model = None
            self._piece_to_id = load_vocab(vocab_file)
            self.vocab = list(self._piece_to_id)
            self._wordpiece = _WordPieceTokenizer(self._piece_to_id, do_lower_case)
            source, special_pieces = vocab_file, {
                "pad": ("[PAD]", "<pad>"), "unk": ("[UNK]", "<unk>"), "cls": ("[CLS]",),
                "sep": ("[SEP]",), "mask": ("[MASK]",),
            }
        self._special_ids = {}
        for role, candidates in special_pieces.items():
            found = [self._piece_to_id[p] for p in candidates if p in self._piece_to_id]
            if not found:
                raise ValueError(
                    f"{source!r} lacks the {role} token (expected one of {', '.join(candidates)})"
                )
            self._special_ids[role] = found[0]

    @property
    def is_spm(self):
        return self.sp_model is not None

    @property
    def vocab_size(self):
        return len(self.vocab)

    @property
    def pad_id(self):
        return self._special_ids["pad"]

    @property
    def unk_id(self):
        return self._special_ids["unk"]

    @property
    def cls_id(self):
        return self._special_ids["cls"]

    @property
    def sep_id(self):
        return self._special_ids["sep"]

    @property
    def mask_id(self):
        return self._special_ids["mask"]

    def tokenize(self, text, sample=False):
        """Normalised text -> pieces ("▁"-prefixed SentencePiece, or "##"-continued WordPiece)."""
        if self.is_spm:
            return encode_pieces(self.sp_model, preprocess_text(text, lower=self.do_lower_case), sample)
        return self._wordpiece.tokenize(text)

    def encode(self, text):
        """Text -> ids, without [CLS]/[SEP]."""
        return self.convert_tokens_to_ids(self.tokenize(text))

    def convert_tokens_to_ids(self, tokens):
        unk = self.unk_id
        return [self._piece_to_id.get(token, unk) for token in tokens]

    def convert_ids_to_tokens(self, ids):
        size = self.vocab_size
        for token_id in ids:
            if not 0 <= token_id < size:
                raise ValueError(f"token id {token_id} is outside the vocabulary [0, {size})")
        return [self.vocab[token_id] for token_id in ids]


def _is_whitespace(char):
    # \t, \n, \r count as whitespace although Unicode calls them control characters.
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char):
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    # All non-letter/number ASCII (such as "$" and "^") splits words, as in BERT.
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code):
    """CJK Unified Ideographs blocks: each such character becomes its own word."""
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _basic_words(text, do_lower_case):
    """BERT's basic tokenization: clean, isolate CJK, lowercase + strip accents, split punctuation."""
    cleaned = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or _is_control(char):
            continue
        if _is_whitespace(char):
            cleaned.append(" ")
        elif _is_cjk(code):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(char)
    words = []
    for word in "".join(cleaned).split():
        if do_lower_case:
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(char for char in word if unicodedata.category(char) != "Mn")
        current = []
        for char in word:
            if _is_punctuation(char):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


class _WordPieceTokenizer:
    """Greedy longest-match-first WordPiece with "##" continuations, as the Chinese ALBERTs use."""

    def __init__(self, vocab, do_lower_case):
        self.vocab = vocab
        self.do_lower_case = do_lower_case
        self.unk_token = "[UNK]" if "[UNK]" in vocab else "<unk>"

    def tokenize(self, text):
        pieces = []
        for word in _basic_words(text, self.do_lower_case):
            pieces.extend(self._split_word(word))
        return pieces

    def _split_word(self, word):
        if len(word) > WORDPIECE_MAX_CHARS:
            return [self.unk_token]
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.vocab:
                    break
                end -= 1
            if end == start:  # no prefix of the rest is in the vocabulary
                return [self.unk_token]
            pieces.append(candidate)
            start = end
        return pieces
