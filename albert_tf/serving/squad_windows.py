"""SQuAD windows and answer search in graph ops: `squad.features` and `squad.postprocess`, batched.

A paragraph of P pieces after a Q-piece question is read in windows of M = max_seq_length - Q - 3
pieces starting `min(M, doc_stride)` apart (the rules of `SquadWindowing`, which the feature files
follow too), the last one ending at the paragraph's end
(`features.doc_windows`). A piece may start an answer only in its max-context window
(`features.max_context_window`, scored in float64 as Python does, first window on ties). The
answer of a question is the best-scoring valid span over all its windows, ranked by the float64
sum of start and end scores in the same order as the Python candidates (ties go to the earlier
window, start and end), so the two paths pick the same span.
"""

import tensorflow as tf

NO_SPAN = -1e30


class Windows:
    """The windows of a batch of questions by `windowing` (a `SquadWindowing`): flat [N] tensors over
    all windows of all questions."""

    def __init__(self, query_lengths, num_pieces, windowing, max_windows=None):
        self.budget = windowing.doc_budget(query_lengths)  # [B]: M, pieces per window
        stride = windowing.stride(self.budget, tf.minimum)
        per_question = tf.where(num_pieces > self.budget, (num_pieces - self.budget + stride - 1) // stride + 1, 1)
        if max_windows is not None:  # checked before any tensor sized by the windows is made
            check = tf.debugging.assert_less_equal(tf.reduce_sum(per_question), max_windows, summarize=3, message=(
                f"context: a request may make at most {max_windows} windows (max_windows, set at export)"))
            with tf.control_dependencies([check]):
                per_question = tf.identity(per_question)
        self.per_question = per_question  # [B]
        self.question = tf.repeat(tf.range(tf.size(num_pieces)), self.per_question)  # [N]
        self.index = tf.ragged.range(self.per_question).flat_values  # [N], within its question
        self.start = self.index * tf.gather(stride, self.question)
        self.length = tf.minimum(tf.gather(num_pieces, self.question) - self.start,
                                 tf.gather(self.budget, self.question))
        self.doc_offset = windowing.doc_offset(tf.gather(query_lengths, self.question))

    def by_question(self, values, default):
        """[N] -> [B, most windows], padded with `default`."""
        return tf.RaggedTensor.from_row_lengths(values, tf.cast(self.per_question, tf.int64)).to_tensor(default)

    def max_context(self, length):
        """bool [N, length]: whether window position j (piece start + j) is that piece's max-context window."""
        starts = tf.gather(self.by_question(self.start, 0), self.question)[:, :, tf.newaxis]  # [N, W, 1]
        lengths = tf.gather(self.by_question(self.length, 0), self.question)[:, :, tf.newaxis]
        position = (self.start[:, tf.newaxis] + tf.range(length)[tf.newaxis, :])[:, tf.newaxis, :]  # [N, 1, L]
        ends = starts + lengths - 1
        inside = (starts <= position) & (position <= ends)
        score = (tf.cast(tf.minimum(position - starts, ends - position), tf.float64)
                 + tf.constant(0.01, tf.float64) * tf.cast(lengths, tf.float64))
        score = tf.where(inside, score, -tf.constant(float("inf"), tf.float64))
        best = tf.reduce_max(score, axis=1, keepdims=True)
        window = tf.range(tf.shape(starts)[1])[tf.newaxis, :, tf.newaxis]
        first_best = tf.reduce_min(tf.where(score == best, window, tf.shape(starts)[1]), axis=1)
        return tf.equal(first_best, self.index[:, tf.newaxis]) & (tf.range(length)[tf.newaxis, :]
                                                                    < self.length[:, tf.newaxis])

    def valid(self, start, end, max_context, max_answer_length):
        """Whether sequence positions start, end [N, K] are an answer span (`postprocess._valid`)."""
        offset, length = self.doc_offset[:, tf.newaxis], self.length[:, tf.newaxis]
        start_piece, end_piece = start - offset, end - offset
        starts_context = tf.gather(max_context, tf.clip_by_value(start_piece, 0, tf.shape(max_context)[1] - 1),
                                   batch_dims=1)
        return ((start_piece >= 0) & (start_piece < length) & (end_piece < length) & starts_context
                & (end >= start) & (end - start + 1 <= max_answer_length))

    def best_span(self, start, end, scores, valid):
        """(paragraph piece of the start, of the end, score [B] float64; NO_SPAN where none) of the best
        valid candidate per question; `start`, `end`, `scores`, `valid` are [N, K] in candidate order."""
        scores = tf.where(valid, scores, NO_SPAN)
        in_window = tf.argmax(scores, axis=1, output_type=tf.int32)  # first of equal scores
        window_score = tf.reduce_max(scores, axis=1)
        by_question = self.by_question(window_score, 2 * NO_SPAN)
        by_question = tf.concat([by_question, tf.fill([tf.shape(by_question)[0], 1],
                                                  tf.constant(2 * NO_SPAN, by_question.dtype))], 1)  # never empty
        window = tf.argmax(by_question, axis=1, output_type=tf.int32)
        window = tf.cast(tf.RaggedTensor.from_row_lengths(self.question, tf.cast(self.per_question, tf.int64))
                         .row_starts(), tf.int32) + window
        window = tf.minimum(window, tf.maximum(tf.size(self.question) - 1, 0))

        def pick(values):
            return tf.gather(values, window)

        piece = pick(self.start - self.doc_offset)
        return (piece + pick(tf.gather(start, in_window, batch_dims=1)),
                piece + pick(tf.gather(end, in_window, batch_dims=1)), pick(window_score))


def top_pairs(start_logits, end_logits, n_best_size):
    """v1.1 candidates of each window: (start, end, float64 score) [N, k * k] for every pair of the top
    `n_best_size` start and end positions, starts major (`postprocess.v1_candidates`)."""
    k = tf.minimum(n_best_size, tf.shape(start_logits)[1])
    start_scores, start_index = tf.math.top_k(start_logits, k)
    end_scores, end_index = tf.math.top_k(end_logits, k)
    starts = tf.repeat(start_index, k, axis=1)
    ends = tf.tile(end_index, [1, k])
    scores = (tf.repeat(tf.cast(start_scores, tf.float64), k, axis=1)
              + tf.tile(tf.cast(end_scores, tf.float64), [1, k]))
    return starts, ends, scores


def beam_pairs(outputs):
    """v2.0 candidates of each window from the model's beam (`postprocess.v2_candidates`)."""
    start_index, end_index = outputs["start_top_index"], outputs["end_top_index"]
    ends_per_start = tf.shape(end_index)[1] // tf.shape(start_index)[1]
    starts = tf.repeat(start_index, ends_per_start, axis=1)
    scores = (tf.repeat(tf.cast(outputs["start_top_log_probs"], tf.float64), ends_per_start, axis=1)
              + tf.cast(outputs["end_top_log_probs"], tf.float64))
    return tf.cast(starts, tf.int32), tf.cast(end_index, tf.int32), scores
