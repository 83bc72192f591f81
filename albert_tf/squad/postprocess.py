"""Model outputs per window -> answer text per question, as the original's `write_predictions_v1/v2`.

For each question the candidate spans of all its windows are pooled: a span must start and end
inside the paragraph, start at a piece whose window is its max-context window, not end before it
starts and be at most `max_answer_length` pieces long. Candidates are ranked by start + end
score; the best `n_best_size` distinct texts (cut from the original paragraph by the character
alignment) make the n-best list, with softmax probabilities over those scores.
v1.1 scores are the start/end logits of every pair of the top `n_best_size` starts and ends.
v2.0 scores are the model's beam (top `start_n_top` starts, `end_n_top` ends each) of log
probabilities; the question's no-answer score is its lowest [CLS] answerability logit over its
windows (null_odds.json), and "no answer" ("") is predicted when it reaches
`null_score_diff_threshold` (with no threshold the best span is always given, and the evaluation
finds the threshold).
"""

import collections
import math

Candidate = collections.namedtuple("Candidate", ["feature", "start", "end", "start_log_prob", "end_log_prob"])


def _top_indexes(scores, n):
    return sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[:n]


def _valid(feature, start_index, end_index, max_answer_length):
    """Whether the sequence positions [start_index, end_index] are an answer span of `feature`."""
    start, end = start_index - feature.doc_offset, end_index - feature.doc_offset
    num_pieces = len(feature.tok_start_to_orig_index)
    return (0 <= start < num_pieces and end < num_pieces and feature.token_is_max_context[start]
            and end_index >= start_index and end_index - start_index + 1 <= max_answer_length)


def softmax(scores):
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [value / total for value in exps]


def v1_candidates(feature, result, n_best_size, max_answer_length):
    """Spans from every pair of the top starts and ends (result: `start_logits`, `end_logits`)."""
    for start_index in _top_indexes(result["start_logits"], n_best_size):
        for end_index in _top_indexes(result["end_logits"], n_best_size):
            if _valid(feature, start_index, end_index, max_answer_length):
                yield Candidate(feature, start_index - feature.doc_offset, end_index - feature.doc_offset,
                                float(result["start_logits"][start_index]), float(result["end_logits"][end_index]))


def v2_candidates(feature, result, max_answer_length):
    """Spans from the model's beam (result: `start_top_log_probs`/`_index` [k], `end_top_*` [k * k'])."""
    num_starts = len(result["start_top_index"])
    ends_per_start = len(result["end_top_index"]) // num_starts
    for i in range(num_starts):
        start_index = int(result["start_top_index"][i])
        for j in range(i * ends_per_start, (i + 1) * ends_per_start):
            end_index = int(result["end_top_index"][j])
            if _valid(feature, start_index, end_index, max_answer_length):
                yield Candidate(feature, start_index - feature.doc_offset, end_index - feature.doc_offset,
                                float(result["start_top_log_probs"][i]), float(result["end_top_log_probs"][j]))


def nbest_list(example, candidates, n_best_size, empty_score):
    """The n-best answers of one question: dicts with text, probability, start/end_log_prob."""
    ranked = sorted(candidates, key=lambda c: c.start_log_prob + c.end_log_prob, reverse=True)
    nbest, seen = [], set()
    for candidate in ranked:
        if len(nbest) >= n_best_size:
            break
        begin = candidate.feature.tok_start_to_orig_index[candidate.start]
        finish = candidate.feature.tok_end_to_orig_index[candidate.end]
        text = example.paragraph_text[begin:finish + 1].strip()
        if text in seen:
            continue
        seen.add(text)
        nbest.append({"text": text, "start_log_prob": candidate.start_log_prob,
                      "end_log_prob": candidate.end_log_prob})
    if not nbest:  # no valid span at all (rare): the original's placeholder
        nbest.append({"text": empty_score[0], "start_log_prob": empty_score[1], "end_log_prob": empty_score[1]})
    for entry, probability in zip(nbest, softmax([e["start_log_prob"] + e["end_log_prob"] for e in nbest])):
        entry["probability"] = probability
    return [{key: entry[key] for key in ("text", "probability", "start_log_prob", "end_log_prob")}
            for entry in nbest]


def _features_by_example(features):
    grouped = collections.defaultdict(list)
    for feature in features:
        grouped[feature.example_index].append(feature)
    return grouped


def predictions_v1(examples, features, results, n_best_size=20, max_answer_length=30):
    """({qas_id: answer text}, {qas_id: n-best list}); `results` maps unique_id -> model outputs."""
    by_example = _features_by_example(features)
    answers, nbest = {}, {}
    for index, example in enumerate(examples):
        candidates = [c for feature in by_example[index]
                      for c in v1_candidates(feature, results[feature.unique_id], n_best_size, max_answer_length)]
        nbest[example.qas_id] = nbest_list(example, candidates, n_best_size, ("empty", 0.0))
        answers[example.qas_id] = nbest[example.qas_id][0]["text"]
    return answers, nbest


def predictions_v2(examples, features, results, n_best_size=20, max_answer_length=30,
                   null_score_diff_threshold=None):
    """({qas_id: text or ""}, {qas_id: n-best list}, {qas_id: no-answer score}) for SQuAD 2.0."""
    by_example = _features_by_example(features)
    answers, nbest, null_odds = {}, {}, {}
    for index, example in enumerate(examples):
        example_features = by_example[index]
        candidates = [c for feature in example_features
                      for c in v2_candidates(feature, results[feature.unique_id], max_answer_length)]
        nbest[example.qas_id] = nbest_list(example, candidates, n_best_size, ("", -1e6))
        score = min((float(results[f.unique_id]["cls_logits"]) for f in example_features), default=1e6)
        null_odds[example.qas_id] = score
        no_answer = null_score_diff_threshold is not None and score >= null_score_diff_threshold
        answers[example.qas_id] = "" if no_answer else nbest[example.qas_id][0]["text"]
    return answers, nbest, null_odds
