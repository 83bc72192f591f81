"""The MLM/SOP instance algorithm of google-research/albert's `create_pretraining_data.py`.

Documents (lists of tokenized lines) become `[CLS] A [SEP] B [SEP]` sentence-order pairs with
n-gram whole-word masks, exactly as the original builds them (reference section 4.3-4.4); the
deliberate differences are listed in docs/data.md. Everything here works on token ids: the
whole-word "start piece" rule depends only on the piece, so it is precomputed per vocabulary id.

All randomness comes from the `random.Random` passed in, which the caller derives from
`--random_seed` (the original also drew n-gram sizes from NumPy's never-seeded global RNG).
"""

import bisect
import collections
import dataclasses
import itertools

# The original's punctuation set: string.punctuation without ' < = > (its literal repeats `"`
# where `'` was probably meant). Pieces with any other character count as "foreign" and always
# start a unit, so "'s" and digits are masked on their own.
_SP_PUNCTUATION = frozenset('!"#$%&()*+,-./:;?@[\\]^_`{|}~') | {"€", "£"}
_SP_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz") | _SP_PUNCTUATION
_SPIECE_UNDERLINE = "\u2581"

Instance = collections.namedtuple(
    "Instance",
    ["input_ids", "num_a_tokens", "token_boundary", "masked_lm_positions", "masked_lm_ids",
     "is_random_next"],
)
Instance.__doc__ = """One training pair. `input_ids` is unpadded and already masked;
`num_a_tokens` is len(A), so segment ids are 0 for the first len(A) + 2 tokens."""


def is_start_piece_sentencepiece(piece):
    """True if a SentencePiece piece begins a new whole-word unit (original `_is_start_piece_sp`).

    A piece starts a unit if it begins with "▁" or "<", is a lone punctuation symbol, or has a
    character outside ASCII letters and the original's punctuation set. The original meant "€"
    and "£" to be punctuation but added them as bytes, so under Python 3 they never matched; we
    treat them as punctuation as intended. That changes nothing for 30k-clean.model, where both
    are user-defined symbols and so always pieces of their own (tested).
    """
    if piece.startswith((_SPIECE_UNDERLINE, "<")) or piece in _SP_PUNCTUATION:
        return True
    return not all(char.lower() in _SP_WORD_CHARACTERS for char in piece)


def is_start_piece_wordpiece(piece):
    return not piece.startswith("##")


def start_piece_flags(vocab, is_spm):
    """0/1 per vocabulary id: whether that piece starts a whole-word unit."""
    rule = is_start_piece_sentencepiece if is_spm else is_start_piece_wordpiece
    return [int(rule(piece)) for piece in vocab]


@dataclasses.dataclass(frozen=True)
class InstanceOptions:
    """The original's data flags that shape instances (names and defaults as its flags)."""

    max_seq_length: int = 512
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    ngram: int = 3
    favor_shorter_ngram: bool = True
    do_whole_word_mask: bool = True
    do_permutation: bool = False
    random_next_sentence: bool = False
    sop_single_segment_random_negatives: bool = True

    def __post_init__(self):
        problems = []
        if self.max_seq_length < 5:
            problems.append(f"--max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP] with "
                            f"A and B of at least one token), got {self.max_seq_length}")
        if self.max_predictions_per_seq < 1:
            problems.append(f"--max_predictions_per_seq must be >= 1, got {self.max_predictions_per_seq}")
        if self.max_predictions_per_seq > self.max_seq_length:
            problems.append(f"--max_predictions_per_seq ({self.max_predictions_per_seq}) must be <= "
                            f"--max_seq_length ({self.max_seq_length}): the trainer refuses more")
        if not 0.0 <= self.masked_lm_prob <= 1.0:
            problems.append(f"--masked_lm_prob must be in [0, 1], got {self.masked_lm_prob}")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            problems.append(f"--short_seq_prob must be in [0, 1], got {self.short_seq_prob}")
        if self.ngram < 1:
            problems.append(f"--ngram must be >= 1, got {self.ngram}")
        if self.random_next_sentence and not self.sop_single_segment_random_negatives:
            problems.append("--sop_single_segment_random_negatives=False only applies to sentence-order "
                            "pairs; it cannot be combined with --random_next_sentence=True")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def max_predictions_per_instance(self):
        """Length of the masked_lm_* features: permutation targets double it, as in the original."""
        return self.max_predictions_per_seq * (2 if self.do_permutation else 1)


class InstanceBuilder:
    """Turns the documents of one input chunk into `Instance`s for one pass (one dupe).

    `documents` is a list of documents, each a list of non-empty lines of token ids. Random
    "other documents" (for the single-line-chunk negatives and NSP) are drawn from this list
    only, which is what keeps the builder streaming (see docs/data.md).
    """

    def __init__(self, options, start_flags, cls_id, sep_id, mask_id, stats):
        self.options = options
        self.start_flags = start_flags
        self.vocab_size = len(start_flags)
        self.cls_id, self.sep_id, self.mask_id = cls_id, sep_id, mask_id
        self.stats = stats
        self.max_num_tokens = options.max_seq_length - 3
        weights = [1.0 / n for n in range(1, options.ngram + 1)]
        if not options.favor_shorter_ngram:
            weights.reverse()
        total = sum(weights)
        # n = 1 + the number of thresholds below a uniform draw (the last cumulative, 1, is implicit).
        self._ngram_thresholds = list(itertools.accumulate(w / total for w in weights))[:-1]

    def instances(self, documents, rng):
        for document_index in range(len(documents)):
            yield from self._instances_from_document(documents, document_index, rng)

    # --- sentence pairs (reference 4.3) -----------------------------------------------------------

    def _instances_from_document(self, documents, document_index, rng):
        options = self.options
        document = documents[document_index]
        target_length = self.max_num_tokens
        is_short_target = rng.random() < options.short_seq_prob
        if is_short_target:
            target_length = rng.randint(2, self.max_num_tokens)
        chunk = []
        chunk_length = 0
        i = 0
        while i < len(document):
            chunk.append(document[i])
            chunk_length += len(document[i])
            if i == len(document) - 1 or chunk_length >= target_length:
                pair = self._sentence_pair(documents, document_index, chunk, target_length, rng)
                if pair is not None:
                    tokens_a, tokens_b, is_random_next, unused_lines = pair
                    i -= unused_lines  # lines of a chunk whose B came from elsewhere are reused
                    yield self._finish(tokens_a, tokens_b, is_random_next, is_short_target, rng)
                chunk = []
                chunk_length = 0
            i += 1

    def _sentence_pair(self, documents, document_index, chunk, target_length, rng):
        """(A, B, is_random_next, unused_lines), or None when the chunk cannot make a pair."""
        options = self.options
        stats = self.stats
        a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
        if len(chunk) == 1 and not options.sop_single_segment_random_negatives:
            line = chunk[0]
            if len(line) < 2:
                stats.count("single_token_chunks_dropped")
                return None
            cut = rng.randint(1, len(line) - 1)
            return self._order_pair(list(line[:cut]), list(line[cut:]), rng)
        if len(chunk) == 1 or (options.random_next_sentence and rng.random() < 0.5):
            stats.count("pair_random_document")
            tokens_a = list(itertools.chain.from_iterable(chunk[:a_end]))
            return (tokens_a, self._random_document_tokens(
                documents, document_index, target_length - len(tokens_a), rng), True,
                len(chunk) - a_end)
        tokens_a = list(itertools.chain.from_iterable(chunk[:a_end]))
        tokens_b = list(itertools.chain.from_iterable(chunk[a_end:]))
        if options.random_next_sentence:
            stats.count("pair_in_order")
            return tokens_a, tokens_b, False, 0
        return self._order_pair(tokens_a, tokens_b, rng)

    def _order_pair(self, tokens_a, tokens_b, rng):
        """Sentence-order prediction: swap A and B with probability 0.5 (label 1)."""
        if rng.random() < 0.5:
            self.stats.count("pair_swapped")
            return tokens_b, tokens_a, True, 0
        self.stats.count("pair_in_order")
        return tokens_a, tokens_b, False, 0

    @staticmethod
    def _random_document_tokens(documents, document_index, target_b_length, rng):
        """Lines from a random start in a random other document, up to `target_b_length` tokens."""
        for _ in range(10):  # as the original: give up after 10 tries and use what was drawn
            random_index = rng.randint(0, len(documents) - 1)
            if random_index != document_index:
                break
        random_document = documents[random_index]
        tokens = []
        for line in itertools.islice(random_document, rng.randint(0, len(random_document) - 1), None):
            tokens.extend(line)
            if len(tokens) >= target_b_length:
                break
        return tokens

    def _finish(self, tokens_a, tokens_b, is_random_next, is_short_target, rng):
        tokens_a, tokens_b = self._truncate_pair(tokens_a, tokens_b, rng)
        input_ids = [self.cls_id, *tokens_a, self.sep_id, *tokens_b, self.sep_id]
        stats = self.stats
        stats.count("instances")
        stats.count("tokens", len(input_ids))
        if is_short_target:
            stats.count("short_target_instances")
        return self._mask(input_ids, len(tokens_a), is_random_next, rng)

    def _truncate_pair(self, tokens_a, tokens_b, rng):
        """Drops one token at a time from the longer side, front or back with p=0.5 each."""
        excess = len(tokens_a) + len(tokens_b) - self.max_num_tokens
        if excess <= 0:
            return tokens_a, tokens_b
        self.stats.count("truncated_instances")
        self.stats.count("truncated_tokens", excess)
        a_start, a_stop, b_start, b_stop = 0, len(tokens_a), 0, len(tokens_b)
        for _ in range(excess):
            front = rng.random() < 0.5
            if a_stop - a_start > b_stop - b_start:
                if front:
                    a_start += 1
                else:
                    a_stop -= 1
            elif front:
                b_start += 1
            else:
                b_stop -= 1
        return tokens_a[a_start:a_stop], tokens_b[b_start:b_stop]

    # --- n-gram whole-word masking (reference 4.4) ------------------------------------------------

    def _mask(self, input_ids, num_a_tokens, is_random_next, rng):
        options = self.options
        first_sep = num_a_tokens + 1
        token_boundary = list(map(self.start_flags.__getitem__, input_ids))
        token_boundary[0] = token_boundary[first_sep] = token_boundary[-1] = 1
        if options.masked_lm_prob == 0:
            return Instance(input_ids, num_a_tokens, token_boundary, [], [], is_random_next)
        # Candidate positions skip [CLS] and both [SEP]s. As in the original, a continuation piece
        # right after the first [SEP] joins the last unit of A.
        candidates = list(itertools.chain(range(1, first_sep), range(first_sep + 1, len(input_ids) - 1)))
        if options.do_whole_word_mask:
            candidate_flags = token_boundary[1:first_sep] + token_boundary[first_sep + 1:-1]
            unit_starts = list(itertools.compress(range(len(candidates)), candidate_flags))
            if candidate_flags and not candidate_flags[0]:
                unit_starts.insert(0, 0)
        else:
            unit_starts = list(range(len(candidates)))
        budget = min(options.max_predictions_per_seq,
                     max(1, int(round(len(input_ids) * options.masked_lm_prob))))
        self.stats.count("masked_lm_budget", budget)

        original = input_ids
        output = list(input_ids)
        covered = set()
        masked_positions = self._select_spans(candidates, unit_starts, budget, covered, rng, True)
        self._replace(output, masked_positions, rng)
        targets = [(position, original[position]) for position in masked_positions]
        if options.do_permutation:
            selected = sorted(self._select_spans(candidates, unit_starts, budget, covered, rng, False))
            shuffled = list(selected)
            rng.shuffle(shuffled)
            before = list(output)
            for source, target in zip(selected, shuffled):
                output[source] = before[target]
                targets.append((source, before[source]))
            self.stats.count("permuted_tokens", len(selected))
        targets.sort()
        return Instance(output, num_a_tokens, token_boundary, [p for p, _ in targets],
                        [label for _, label in targets], is_random_next)

    def _select_spans(self, candidates, unit_starts, budget, covered, rng, record_stats):
        """Positions of n-gram spans of whole-word units, walked in random order, up to `budget`.

        Walking a lazily drawn random permutation of the start units is the original's full
        shuffle-then-walk, without shuffling the (mostly unvisited) rest. As in the original a
        sampled n that would overshoot the budget is shortened, and a span that overlaps one
        already taken is skipped. Adds the positions to `covered`.
        """
        num_units = len(unit_starts)
        # Sentinels: "units" past the end end where the candidates end, so units[start:start+n]
        # is shorter near the end, as the original's slices are.
        unit_ends = unit_starts + [len(candidates)] * (len(self._ngram_thresholds) + 1)
        thresholds = self._ngram_thresholds
        order = list(range(num_units))
        selected = []
        ngram_drawn, ngram_masked = self.stats.ngram_drawn, self.stats.ngram_masked
        for k in range(num_units):
            if len(selected) >= budget:
                break
            swap = k + int(rng.random() * (num_units - k))
            order[k], order[swap] = order[swap], order[k]
            start_unit = order[k]
            n = bisect.bisect_right(thresholds, rng.random()) + 1
            if record_stats:
                ngram_drawn[n] += 1
            room = budget - len(selected)
            start = unit_starts[start_unit]
            span_end = unit_ends[start_unit + n]
            while span_end - start > room and n > 1:
                n -= 1
                span_end = unit_ends[start_unit + n]
            if span_end - start > room:
                continue
            span = candidates[start:span_end]
            if not covered.isdisjoint(span):
                continue
            covered.update(span)
            selected.extend(span)
            if record_stats:
                ngram_masked[min(n, num_units - start_unit)] += 1
        return selected

    def _replace(self, tokens, positions, rng):
        """Per position: 80% [MASK], 10% unchanged, 10% a uniformly random id of the whole vocabulary."""
        kept = random_ids = 0
        for position in positions:
            if rng.random() < 0.8:
                tokens[position] = self.mask_id
            elif rng.random() < 0.5:
                kept += 1
            else:
                tokens[position] = int(rng.random() * self.vocab_size)
                random_ids += 1
        counts = self.stats.counts
        counts["masked_as_mask_token"] += len(positions) - kept - random_ids
        counts["masked_kept"] += kept
        counts["masked_as_random_token"] += random_ids
