"""The official SQuAD v1.1 and v2.0 metrics on hand-computed cases, normalization edge cases included."""

import pytest

from albert_tf.squad import evaluation


@pytest.mark.parametrize("text, expected", [
    ("The  Quick, Brown-Fox!", "quick brownfox"),  # punctuation goes before articles: "brown-fox" joins
    ("an apple a day", "apple day"),
    ("Theater and anthem", "theater and anthem"),  # articles only as whole words
    ("A.", ""),  # "a." -> "a" -> removed
    ("the-end", "theend"),  # the hyphen is removed first, so "the" is no longer a word
    ("the\u2014end", "\u2014end"),  # an em dash is not ASCII punctuation: kept, and a word boundary
    ("\u00bfQu\u00e9?", "\u00bfqu\u00e9"),  # non-ASCII punctuation and accents are kept
    ("  1,000\tyears\n", "1000 years"),
])
def test_normalize_answer(text, expected):
    assert evaluation.normalize_answer(text) == expected


def test_f1_counts_overlapping_words_with_multiplicity():
    # pred {cat, sat}, gold {cat, sat, on, mat}: P = 1, R = 1/2 -> F1 = 2/3.
    assert evaluation.f1_score_v1("the cat sat", "a cat sat on the mat") == pytest.approx(2 / 3)
    # pred {cat, cat, dog}, gold {cat, dog, dog}: 2 shared, P = R = 2/3.
    assert evaluation.compute_f1("cat dog dog", "cat cat dog") == pytest.approx(2 / 3)
    assert evaluation.f1_score_v1("Paris", "London") == 0.0


def test_empty_answers_differ_between_v1_and_v2():
    assert evaluation.f1_score_v1("", "") == 0.0  # v1.1: no shared word -> 0
    assert evaluation.compute_f1("", "") == 1.0  # v2.0: "no answer" against "no answer"
    assert evaluation.compute_f1("", "the") == 1.0  # both normalise to nothing
    assert evaluation.compute_f1("Paris", "") == 0.0
    assert evaluation.compute_exact("", "") == 1.0


def _dataset(*qas):
    return [{"paragraphs": [{"context": "c", "qas": list(qas)}]}]


def _qa(qid, *answers):
    return {"id": qid, "answers": [{"text": text, "answer_start": 0} for text in answers]}


def test_evaluate_v1_takes_the_best_gold_and_scores_missing_predictions_zero():
    dataset = _dataset(_qa("q1", "Paris", "the city of Paris"), _qa("q2", "in 1066", "1066"), _qa("q3", "x"))
    predictions = {"q1": "City of Paris!", "q2": "the year 1066"}
    # q1: EM 1 (2nd gold). q2: pred {year, 1066}; vs {in, 1066}: P = R = 1/2 -> 1/2; vs {1066}:
    # P 1/2, R 1 -> 2/3; EM 0. q3 has no prediction: 0, but still counts.
    assert evaluation.evaluate_v1(dataset, predictions) == pytest.approx(
        {"exact_match": 100 / 3, "f1": 100 * (1 + 2 / 3) / 3})


def test_evaluate_v2_splits_has_and_no_answer_and_finds_the_best_threshold():
    dataset = _dataset(_qa("q1", "Paris"), _qa("q2", "red apple"), _qa("q3"), _qa("q4"))
    predictions = {"q1": "Paris", "q2": "apple", "q3": "x", "q4": "y"}
    na_probs = {"q1": 0.1, "q2": 0.6, "q3": 0.8, "q4": 0.3}
    report = evaluation.evaluate_v2(dataset, predictions, na_probs)
    # Default threshold 1.0: nothing is turned into "no answer". q2's F1: P 1, R 1/2 -> 2/3.
    assert report["exact"] == pytest.approx(25.0)
    assert report["f1"] == pytest.approx(100 * (1 + 2 / 3) / 4)
    assert report["total"] == 4
    assert report["HasAns_exact"] == pytest.approx(50.0) and report["HasAns_total"] == 2
    assert report["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert report["NoAns_exact"] == 0.0 and report["NoAns_total"] == 2
    # From "no answer" everywhere (2 right), in increasing na_prob: q1 +1 -> 3 (best, at 0.1),
    # q4 -1, q2 +2/3 (F1) or +0 (EM), q3 -1.
    assert report["best_f1"] == pytest.approx(75.0) and report["best_f1_thresh"] == 0.1
    assert report["best_exact"] == pytest.approx(75.0) and report["best_exact_thresh"] == 0.1
    # Above 0.5, q2 and q3 become "no answer": q1 1, q2 0, q3 1, q4 0.
    assert evaluation.evaluate_v2(dataset, predictions, na_probs, na_prob_thresh=0.5)["exact"] == 50.0


def test_evaluate_v2_drops_gold_answers_that_normalise_to_nothing():
    dataset = _dataset(_qa("q1", "The", "Paris"), _qa("q2", "a"))
    report = evaluation.evaluate_v2(dataset, {"q1": "", "q2": ""})
    # q1's only real gold is "Paris" (an empty prediction misses it); q2 has none, so "" is right.
    assert report["exact"] == 50.0 and "best_f1" not in report
