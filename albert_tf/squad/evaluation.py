"""SQuAD's official metrics: `evaluate-v1.1.py` and `evaluate-v2.0.py`, as functions.

Both normalise an answer the same way (lowercase, drop ASCII punctuation, drop the words a, an,
the, collapse whitespace) and score a prediction by its best match over the gold answers: exact
match, and F1 over the bag of normalised words. They differ at the edges, and each keeps its own:
v1.1 counts a question without a prediction as 0 and gives F1 0 when either side normalises to
nothing; v2.0 skips questions without a prediction, drops gold answers that normalise to nothing,
treats an empty prediction as "no answer" (right only for unanswerable questions), splits the
scores into HasAns/NoAns and finds the no-answer threshold on the scored file itself.
"""

import collections
import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text):
    """Lowercase, remove punctuation, then the articles a/an/the, then extra whitespace."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _overlap_f1(prediction_tokens, gold_tokens):
    common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _questions(dataset):
    for article in dataset:
        for paragraph in article["paragraphs"]:
            yield from paragraph["qas"]


# --- v1.1 ---

def f1_score_v1(prediction, gold):
    return _overlap_f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def exact_match_v1(prediction, gold):
    return float(normalize_answer(prediction) == normalize_answer(gold))


def evaluate_v1(dataset, predictions):
    """{"exact_match", "f1"} in percent over every question of `dataset` (the JSON's `data` list)."""
    exact = f1 = total = 0.0
    for qa in _questions(dataset):
        total += 1
        if qa["id"] not in predictions:
            continue  # the official script warns and scores it 0
        golds = [answer["text"] for answer in qa["answers"]]
        prediction = predictions[qa["id"]]
        exact += max(exact_match_v1(prediction, gold) for gold in golds)
        f1 += max(f1_score_v1(prediction, gold) for gold in golds)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


# --- v2.0 ---

def compute_exact(gold, prediction):
    return float(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold, prediction):
    gold_tokens = normalize_answer(gold).split() if gold else []
    prediction_tokens = normalize_answer(prediction).split() if prediction else []
    if not gold_tokens or not prediction_tokens:
        return float(gold_tokens == prediction_tokens)  # "no answer" is right only against "no answer"
    return _overlap_f1(prediction_tokens, gold_tokens)


def has_answer(dataset):
    """{question id: whether it has a gold answer}."""
    return {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}


def raw_scores(dataset, predictions):
    """({id: exact}, {id: f1}) for the questions that have a prediction."""
    exact, f1 = {}, {}
    for qa in _questions(dataset):
        if qa["id"] not in predictions:
            continue
        golds = [answer["text"] for answer in qa["answers"] if normalize_answer(answer["text"])] or [""]
        prediction = predictions[qa["id"]]
        exact[qa["id"]] = max(compute_exact(gold, prediction) for gold in golds)
        f1[qa["id"]] = max(compute_f1(gold, prediction) for gold in golds)
    return exact, f1


def apply_no_answer_threshold(scores, na_probs, qid_to_has_ans, threshold):
    """Scores with "no answer" predicted wherever the no-answer score exceeds `threshold`."""
    return {qid: float(not qid_to_has_ans[qid]) if na_probs[qid] > threshold else score
            for qid, score in scores.items()}


def _eval_dict(exact, f1, qids):
    total = len(qids)
    return {"exact": 100.0 * sum(exact[q] for q in qids) / total,
            "f1": 100.0 * sum(f1[q] for q in qids) / total, "total": total}


def find_best_threshold(predictions, scores, na_probs, qid_to_has_ans):
    """(best score in percent, threshold): answering "no answer" above the threshold, walking the
    questions in increasing no-answer score, starting from "no answer" everywhere."""
    score = best_score = sum(1 for qid in qid_to_has_ans if not qid_to_has_ans[qid])
    best_threshold = 0.0
    for qid in sorted(na_probs, key=lambda q: na_probs[q]):
        if qid not in scores:
            continue
        if qid_to_has_ans[qid]:
            score += scores[qid]
        else:
            score += -1 if predictions[qid] else 0
        if score > best_score:
            best_score, best_threshold = score, na_probs[qid]
    return 100.0 * best_score / len(scores), best_threshold


def evaluate_v2(dataset, predictions, na_probs=None, na_prob_thresh=1.0):
    """The official v2.0 report: exact, f1, total, HasAns_*/NoAns_* and, given `na_probs`
    ({id: no-answer score}, null_odds.json), best_exact/best_f1 and their thresholds."""
    qid_to_has_ans = has_answer(dataset)
    scored_na_probs = na_probs if na_probs is not None else {qid: 0.0 for qid in predictions}
    exact_raw, f1_raw = raw_scores(dataset, predictions)
    exact = apply_no_answer_threshold(exact_raw, scored_na_probs, qid_to_has_ans, na_prob_thresh)
    f1 = apply_no_answer_threshold(f1_raw, scored_na_probs, qid_to_has_ans, na_prob_thresh)
    report = _eval_dict(exact, f1, list(exact))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [qid for qid in exact if qid_to_has_ans[qid] == wanted]
        if qids:
            report.update({f"{prefix}_{k}": v for k, v in _eval_dict(exact, f1, qids).items()})
    if na_probs is not None:
        report["best_exact"], report["best_exact_thresh"] = find_best_threshold(
            predictions, exact_raw, na_probs, qid_to_has_ans)
        report["best_f1"], report["best_f1_thresh"] = find_best_threshold(
            predictions, f1_raw, na_probs, qid_to_has_ans)
    return report
