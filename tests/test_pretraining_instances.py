"""The instance algorithm (reference 4.3-4.4): pairs, truncation, whole-word n-gram masking.

Synthetic documents whose token ids encode (document, position) let the tests recover where
every token of an instance came from; the bundled corpus checks the real start-piece rule.
"""

import math
import random

import pytest

from albert_tf.text.tokenization import AlbertTokenizer
from data_prep import corpus
from data_prep.file_access import LocalFiles
from data_prep.pretraining_instances import (
    InstanceBuilder,
    InstanceOptions,
    is_start_piece_sentencepiece,
    is_start_piece_wordpiece,
    start_piece_flags,
)
from data_prep.pretraining_stats import PretrainingStats

SPM_MODEL = "data/albert_spm/30k-clean.model"
CORPUS = "data/corpus/sample.txt"
SEQUENCE_TOKENS = 125  # the tokens of a 128-token sequence (less [CLS] and two [SEP]): longer lines are counted
CLS, SEP, MASK = 2, 3, 4
DOC_STRIDE = 1000  # synthetic token id = 1000 * (document + 1) + position in the document


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(spm_model_file=SPM_MODEL)


@pytest.fixture(scope="module")
def corpus_documents(tokenizer):
    files = LocalFiles()
    whole_file = corpus.Chunk(0, CORPUS, 0, files.size(CORPUS))
    return corpus.read_documents(files, whole_file, tokenizer, PretrainingStats(), SEQUENCE_TOKENS)


def synthetic_documents(line_lengths_per_document):
    documents = []
    for d, line_lengths in enumerate(line_lengths_per_document):
        position = 0
        document = []
        for length in line_lengths:
            document.append([DOC_STRIDE * (d + 1) + position + i for i in range(length)])
            position += length
        documents.append(document)
    return documents


def build_instances(documents, seed=0, start_flags=None, passes=1, **options):
    options = InstanceOptions(**options)
    stats = PretrainingStats()
    flags = start_flags or [1] * (DOC_STRIDE * (len(documents) + 2))
    builder = InstanceBuilder(options, flags, CLS, SEP, MASK, stats)
    instances = []
    for dupe in range(passes):
        instances.extend(builder.instances(documents, random.Random(seed * 1000 + dupe)))
    return instances, stats


def segments(instance):
    """(A, B) with the masked tokens restored from the labels."""
    tokens = list(instance.input_ids)
    for position, label in zip(instance.masked_lm_positions, instance.masked_lm_ids):
        tokens[position] = label
    num_a = instance.num_a_tokens
    return tokens[1:num_a + 1], tokens[num_a + 2:-1]


def budget(num_tokens, options=InstanceOptions()):
    return min(options.max_predictions_per_seq, max(1, int(round(num_tokens * options.masked_lm_prob))))


@pytest.mark.parametrize("piece, is_start", [
    ("\u2581the", True), ("ing", False), ("s", False), ("ed.", False), ("'", True), ("?'", True),
    ("9", True), ("19", True), (",", True), ("-", True), ("<unk>", True), ("\u00e9t", True),
    ("x=", True), ("\u20ac", True), ("\u00a3", True), ("Ab", False),
])
def test_sentencepiece_start_piece_rule(piece, is_start):
    assert is_start_piece_sentencepiece(piece) is is_start


def test_wordpiece_start_piece_rule():
    assert is_start_piece_wordpiece("play") and not is_start_piece_wordpiece("##ing")


def test_euro_pound_fix_changes_nothing_for_the_albert_vocabulary(tokenizer):
    # The original's bytes/str bug only matters for pieces mixing €/£ with letters; the ALBERT
    # model has none (they are user-defined symbols), and the lone symbols start a unit both ways.
    assert sorted(p for p in tokenizer.vocab if "\u20ac" in p or "\u00a3" in p) == ["\u00a3", "\u20ac"]
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    assert flags[tokenizer.vocab.index("\u20ac")] == flags[tokenizer.vocab.index("\u00a3")] == 1


def test_instances_have_the_original_layout(corpus_documents, tokenizer):
    options = InstanceOptions(max_seq_length=128)
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    instances, _ = build_instances(corpus_documents, start_flags=flags, max_seq_length=128)
    assert len(instances) > 1000
    exact_budget = 0
    for instance in instances:
        ids, num_a = instance.input_ids, instance.num_a_tokens
        assert len(ids) <= 128 and num_a >= 1 and len(ids) - num_a - 3 >= 1
        assert ids[0] == tokenizer.cls_id and ids[num_a + 1] == ids[-1] == tokenizer.sep_id
        assert instance.token_boundary[0] == instance.token_boundary[num_a + 1] == 1
        positions = instance.masked_lm_positions
        assert positions == sorted(set(positions))
        assert not {0, num_a + 1, len(ids) - 1} & set(positions)
        assert len(positions) == len(instance.masked_lm_ids) <= budget(len(ids), options)
        exact_budget += len(positions) == budget(len(ids), options)
    assert exact_budget / len(instances) > 0.99


def test_masks_never_split_a_whole_word(corpus_documents, tokenizer):
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    instances, _ = build_instances(corpus_documents, start_flags=flags, max_seq_length=128)
    continuations_masked = 0
    for instance in instances:
        masked = set(instance.masked_lm_positions)
        specials = {0, instance.num_a_tokens + 1, len(instance.input_ids) - 1}
        for position in masked:
            after = position + 1
            if after not in specials and after < len(instance.input_ids) and not instance.token_boundary[after]:
                assert after in masked  # the rest of the word is masked too
                continuations_masked += 1
            if not instance.token_boundary[position] and position - 1 not in specials:
                assert position - 1 in masked  # and so is its beginning
    assert continuations_masked > 100


def test_without_whole_word_masking_pieces_are_masked_alone(corpus_documents, tokenizer):
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    instances, _ = build_instances(corpus_documents, start_flags=flags, max_seq_length=128,
                                   do_whole_word_mask=False)
    split_words = sum(
        1 for instance in instances for position in instance.masked_lm_positions
        if position + 1 < len(instance.input_ids) - 1 and not instance.token_boundary[position + 1]
        and position + 1 not in instance.masked_lm_positions)
    assert split_words > 100


def test_labels_are_the_original_tokens_and_pairs_are_ordered_or_swapped():
    documents = synthetic_documents([[7, 9, 5, 11, 6, 8] * 4 for _ in range(6)])
    instances, stats = build_instances(documents, passes=3, max_seq_length=40)
    assert stats.counts["pair_in_order"] > 0 and stats.counts["pair_swapped"] > 0
    for instance in instances:
        tokens_a, tokens_b = segments(instance)
        for part in (tokens_a, tokens_b):  # each side is a contiguous run of one document
            assert part == list(range(part[0], part[0] + len(part)))
        same_document = tokens_a[0] // DOC_STRIDE == tokens_b[0] // DOC_STRIDE
        if instance.is_random_next and same_document:
            assert tokens_a[0] > tokens_b[-1]  # swapped: B's text comes first in the document
        elif not instance.is_random_next:
            assert same_document and tokens_a[-1] < tokens_b[0]


def test_single_line_chunks_get_b_from_another_document_by_default():
    documents = synthetic_documents([[60], [60], [60], [60]])  # every chunk is one long line
    instances, stats = build_instances(documents, passes=5, max_seq_length=40)
    assert stats.counts["pair_random_document"] == len(instances) > 0
    for instance in instances:
        tokens_a, tokens_b = segments(instance)
        assert instance.is_random_next
        assert tokens_a[0] // DOC_STRIDE != tokens_b[0] // DOC_STRIDE


def test_single_line_chunks_are_split_when_random_negatives_are_off():
    documents = synthetic_documents([[60], [60], [60], [60]])
    instances, stats = build_instances(documents, passes=20, max_seq_length=40,
                                       sop_single_segment_random_negatives=False)
    assert stats.counts["pair_random_document"] == 0
    labels = [instance.is_random_next for instance in instances]
    assert 0 < sum(labels) < len(labels)
    for instance in instances:
        tokens_a, tokens_b = segments(instance)
        assert tokens_a[0] // DOC_STRIDE == tokens_b[0] // DOC_STRIDE
        assert (tokens_a[0] > tokens_b[-1]) == instance.is_random_next


def test_next_sentence_mode_never_swaps():
    documents = synthetic_documents([[5, 6, 7, 5, 6, 7] * 3 for _ in range(8)])
    instances, stats = build_instances(documents, passes=4, max_seq_length=40, random_next_sentence=True)
    assert stats.counts["pair_swapped"] == 0
    assert stats.counts["pair_random_document"] > 0 and stats.counts["pair_in_order"] > 0
    for instance in instances:
        tokens_a, tokens_b = segments(instance)
        if instance.is_random_next:
            continue
        assert tokens_a[-1] < tokens_b[0]


def test_truncation_keeps_pairs_within_the_length():
    documents = synthetic_documents([[30, 50, 40, 70] for _ in range(3)])
    instances, stats = build_instances(documents, passes=4, max_seq_length=32)
    assert stats.counts["truncated_instances"] > 0
    for instance in instances:
        tokens_a, tokens_b = segments(instance)
        assert len(instance.input_ids) <= 32 and tokens_a and tokens_b


def test_same_seed_same_instances_other_seed_other_instances(corpus_documents, tokenizer):
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    first, _ = build_instances(corpus_documents[:3], seed=1, start_flags=flags, max_seq_length=64)
    again, _ = build_instances(corpus_documents[:3], seed=1, start_flags=flags, max_seq_length=64)
    other, _ = build_instances(corpus_documents[:3], seed=2, start_flags=flags, max_seq_length=64)
    assert first == again
    assert first != other


def test_permutation_adds_targets_beyond_the_masks(corpus_documents, tokenizer):
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    options = InstanceOptions(max_seq_length=128, do_permutation=True)
    assert options.max_predictions_per_instance == 40
    instances, stats = build_instances(corpus_documents[:4], start_flags=flags, max_seq_length=128,
                                       do_permutation=True)
    assert stats.counts["permuted_tokens"] > 0
    for instance in instances:
        assert budget(len(instance.input_ids)) < len(instance.masked_lm_positions) <= 40


def test_favor_shorter_ngram_false_reverses_p_of_n(corpus_documents, tokenizer):
    flags = start_piece_flags(tokenizer.vocab, is_spm=True)
    _, stats = build_instances(corpus_documents, start_flags=flags, max_seq_length=128,
                               favor_shorter_ngram=False)
    total = sum(stats.ngram_drawn.values())
    assert total > 10000
    for n, p in ((1, 2 / 11), (2, 3 / 11), (3, 6 / 11)):
        assert abs(stats.ngram_drawn[n] / total - p) < 4 * math.sqrt(p * (1 - p) / total)


def test_zero_masking_probability_masks_nothing():
    documents = synthetic_documents([[10, 12, 9] for _ in range(3)])
    instances, _ = build_instances(documents, max_seq_length=32, masked_lm_prob=0.0)
    assert instances and all(not instance.masked_lm_positions for instance in instances)


@pytest.mark.parametrize("options, message", [
    ({"max_seq_length": 4}, "--max_seq_length must be >= 5"),
    ({"masked_lm_prob": 1.5}, "--masked_lm_prob must be in"),
    ({"ngram": 0}, "--ngram must be >= 1"),
    ({"random_next_sentence": True, "sop_single_segment_random_negatives": False},
     "cannot be combined with --random_next_sentence"),
])
def test_options_are_validated(options, message):
    with pytest.raises(ValueError, match=message):
        InstanceOptions(**options)
