"""Character alignment between a SQuAD paragraph and its SentencePiece pieces.

Normalisation (whitespace collapse, accent stripping, lowercasing, SentencePiece's NFKC) changes
the text, so piece offsets cannot be counted off the original string. As the original
(`squad_utils.convert_examples_to_features`) does, the pieces are joined ("▁" read as a space)
and aligned to the paragraph by a longest common subsequence restricted to a band around the
diagonal (the two texts differ little); each character compares the paragraph's character after
the same normalisation. Unaligned characters take the nearest aligned neighbour's position.
"""

import dataclasses

from albert_tf.text.tokenization import SPIECE_UNDERLINE, preprocess_text

# The alignment is accepted once it matches more than this share of the paragraph's characters.
MIN_MATCHED_SHARE = 0.8
_SEARCHES = 2  # the band is doubled once when the first search matches too little


@dataclasses.dataclass(frozen=True)
class ParagraphAlignment:
    """A paragraph's pieces and where each starts and ends in the paragraph's characters."""

    pieces: tuple
    tok_start_to_orig_index: tuple
    tok_end_to_orig_index: tuple
    orig_to_chartok_index: tuple
    chartok_to_tok_index: tuple

    def token_span(self, start_char, end_char):
        """The first and last piece of the characters [start_char, end_char] (inclusive)."""
        start = self.chartok_to_tok_index[convert_index(self.orig_to_chartok_index, start_char, is_start=True)]
        end = self.chartok_to_tok_index[convert_index(self.orig_to_chartok_index, end_char, is_start=False)]
        return start, end


def convert_index(index, position, length=None, is_start=True):
    """`index[position]`, or when that is unaligned (None) a value guessed from its neighbours.

    A start moves right of the nearest aligned position on the left, an end left of the nearest
    on the right, never past them; `length` bounds a start found only on the left.
    """
    if index[position] is not None:
        return index[position]
    rear = position
    while rear < len(index) - 1 and index[rear] is None:
        rear += 1
    front = position
    while front > 0 and index[front] is None:
        front -= 1
    before, after = index[front], index[rear]
    if before is None and after is None:
        raise ValueError("no character of the paragraph is aligned")
    if before is None:
        if after >= 1:
            return 0 if is_start else after - 1
        return after
    if after is None:
        if length is not None and before < length - 1:
            return before + 1 if is_start else length - 1
        return before
    if after > before + 1:
        return before + 1 if is_start else after - 1
    return after if is_start else before


def _banded_lcs(normalized_chars, joined, max_dist):
    """Score of the best alignment and the back-pointers (0 up, 1 left, 2 diagonal match)."""
    n, m = len(normalized_chars), len(joined)
    moves = {}
    previous = {}
    for i in range(n):
        current = {}
        for j in range(max(0, i - max_dist), min(m, i + max_dist)):
            score = 0
            if i > 0:
                moves[i, j] = 0
                score = previous.get(j, 0)
            if j > 0 and current.get(j - 1, 0) > score:
                moves[i, j] = 1
                score = current[j - 1]
            diagonal = previous.get(j - 1, 0) if i > 0 and j > 0 else 0
            if normalized_chars[i] == joined[j] and diagonal + 1 > score:
                moves[i, j] = 2
                score = diagonal + 1
            current[j] = score
        previous = current
    return previous.get(m - 1, 0), moves


def align(paragraph_text, pieces, do_lower_case):
    """A `ParagraphAlignment`, or None when the pieces cannot be matched to the text."""
    chartok_to_tok_index, tok_start_to_chartok, tok_end_to_chartok = [], [], []
    count = 0
    for i, piece in enumerate(pieces):
        chars = piece.replace(SPIECE_UNDERLINE, " ")
        chartok_to_tok_index.extend([i] * len(chars))
        tok_start_to_chartok.append(count)
        count += len(chars)
        tok_end_to_chartok.append(count - 1)
    joined = "".join(pieces).replace(SPIECE_UNDERLINE, " ")
    n, m = len(paragraph_text), len(joined)
    if n == 0 or m == 0:
        return None
    normalized_chars = [preprocess_text(char, lower=do_lower_case, remove_space=False) for char in paragraph_text]
    max_dist = abs(n - m) + 5
    for _ in range(_SEARCHES):
        score, moves = _banded_lcs(normalized_chars, joined, max_dist)
        if score > MIN_MATCHED_SHARE * n:
            break
        max_dist *= 2
    orig_to_chartok = [None] * n
    chartok_to_orig = [None] * m
    i, j = n - 1, m - 1
    while i >= 0 and j >= 0 and (i, j) in moves:
        move = moves[i, j]
        if move == 2:
            orig_to_chartok[i], chartok_to_orig[j] = j, i
            i, j = i - 1, j - 1
        elif move == 1:
            j -= 1
        else:
            i -= 1
    if all(value is None for value in orig_to_chartok) or score < MIN_MATCHED_SHARE * n:
        return None
    return ParagraphAlignment(
        pieces=tuple(pieces),
        tok_start_to_orig_index=tuple(convert_index(chartok_to_orig, p, n, is_start=True)
                                      for p in tok_start_to_chartok),
        tok_end_to_orig_index=tuple(convert_index(chartok_to_orig, p, n, is_start=False)
                                    for p in tok_end_to_chartok),
        orig_to_chartok_index=tuple(orig_to_chartok),
        chartok_to_tok_index=tuple(chartok_to_tok_index),
    )
