"""A fine-tuned SQuAD model as a SavedModel that answers raw questions about raw paragraphs.

Signatures:
    `serving_default`: `question`, `context` string [batch] -> `answer_text` string [batch],
        `answer_start`, `answer_end` int32 [batch] (character offsets into `context`, end
        exclusive; -1 when there is no answer), `score` float32 (start + end score of the span),
        and for SQuAD 2.0 `no_answer_score` (the [CLS] answerability logit; "no answer" when it
        reaches the exported `null_score_diff_threshold`).
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids`, `p_mask` int32
        [batch, seq] -> the model's raw outputs, for clients that build windows themselves.

Everything runs in the graph (tensorflow-text), with the training tokenizer's normalisation.
The paragraph is split on whitespace with byte offsets, each word tokenized on its own (pieces
never cross a space), and a piece's characters are found by the lengths of the pieces before it
in its word; where normalisation changed a word's length (accents, some Unicode) the whole word
stands for each of its pieces. One window per question: a paragraph longer than
`max_seq_length` minus the question is cut (the Python runner's sliding windows are not
repeated here). The best span is searched as `run_squad.py` does, over every valid pair (v1.1)
or the model's start/end beam (v2.0), at most `max_answer_length` pieces long.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf.kernels import with_kernels
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.serving.versioned_dir import save_versioned
from albert_tf.text_preprocessing import AlbertTextTokenizer, _char_classes
from albert_tf.tokenization import SPIECE_UNDERLINE, AlbertTokenizer

TOKEN_IDS_SIGNATURE = "serve_token_ids"
_NO_SPAN = -1e30


class SquadServingModule(tf.Module):
    """Wraps an `AlbertQuestionAnswering` with in-graph windowing and answer decoding."""

    def __init__(self, model, spm_model_file, do_lower_case=True, max_seq_length=384, max_query_length=64,
                 max_answer_length=30, null_score_diff_threshold=None):
        super().__init__()
        if model.version_2_with_negative and null_score_diff_threshold is None:
            raise ValueError("a SQuAD 2.0 export needs null_score_diff_threshold (found on the dev set by "
                             "run_squad.py, or given with --null_score_diff_threshold)")
        # The reference kernels: plain TF ops, which every TF Serving build runs (no XLA).
        self.model = with_kernels(model, "reference")
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        pieces = AlbertTokenizer(spm_model_file).vocab
        self._piece_bytes = tf.constant([len(p.replace(SPIECE_UNDERLINE, "").encode("utf-8")) for p in pieces],
                                        tf.int64)
        self._whitespace = _char_classes()[0] + "+"
        self.max_seq_length = max_seq_length
        self.max_query_length = max_query_length
        self.max_answer_length = max_answer_length
        self.null_score_diff_threshold = null_score_diff_threshold
        text = tf.TensorSpec([None], tf.string)
        self.serve_text = tf.function(self._serve_text, input_signature=[text, text])
        ids_spec = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES + ("p_mask",)}
        self.serve_token_ids = tf.function(self._serve_token_ids, input_signature=[ids_spec])

    def _context_pieces(self, context):
        """Ragged piece ids [B, (P)] of `context` and each piece's byte span in it."""
        words, word_starts, word_ends = tf_text.regex_split_with_offsets(context, self._whitespace)
        ids = self.tokenizer(words.flat_values)  # [words, (pieces)]
        lengths = tf.gather(self._piece_bytes, ids)
        ends_in_word = tf.cumsum(lengths, axis=1)
        starts_in_word = ends_in_word - lengths
        word_start = tf.cast(words.with_flat_values(word_starts.flat_values).flat_values, tf.int64)
        word_end = tf.cast(word_ends.flat_values, tf.int64)
        exact = tf.equal(tf.reduce_sum(lengths, axis=1), word_end - word_start)  # [words]
        row_start = tf.ones_like(ids, tf.int64) * word_start[:, tf.newaxis]
        row_end = tf.ones_like(ids, tf.int64) * word_end[:, tf.newaxis]
        exact_rows = tf.ones_like(ids, tf.bool) & exact[:, tf.newaxis]
        starts = tf.where(exact_rows, row_start + starts_in_word, row_start)
        ends = tf.where(exact_rows, row_start + ends_in_word, row_end)

        def per_example(values):
            return words.with_flat_values(values).merge_dims(1, 2)

        return per_example(ids), per_example(starts), per_example(ends)

    def _serve_text(self, question, context):
        query = self.tokenizer(question)[:, :self.max_query_length]
        ids, starts, ends = self._context_pieces(context)
        budget = self.max_seq_length - tf.cast(query.row_lengths(), tf.int32) - 3
        keep = tf.ragged.range(ids.row_lengths()) < tf.cast(budget, tf.int64)[:, tf.newaxis]
        ids, starts, ends = (tf.ragged.boolean_mask(x, keep) for x in (ids, starts, ends))
        batch = query.nrows()
        cls = tf.fill([batch, 1], self.tokenizer.cls_id)
        sep = tf.fill([batch, 1], self.tokenizer.sep_id)
        as_ragged = tf.RaggedTensor.from_tensor
        word_ids = tf.concat([as_ragged(cls), query, as_ragged(sep), tf.cast(ids, tf.int32), as_ragged(sep)], 1)
        query_part = tf.concat([as_ragged(cls), query, as_ragged(sep)], 1)
        ones = tf.ones_like(ids, tf.int32)
        type_ids = tf.concat([tf.zeros_like(query_part), ones, as_ragged(tf.ones_like(sep))], 1)
        p_mask = tf.concat([as_ragged(tf.zeros_like(cls)), tf.ones_like(query), as_ragged(tf.ones_like(sep)),
                            ones * 0, as_ragged(tf.ones_like(sep))], 1)
        inputs = {
            "input_word_ids": word_ids.to_tensor(self.tokenizer.pad_id),
            "input_mask": tf.ones_like(word_ids).to_tensor(0),
            "input_type_ids": type_ids.to_tensor(0),
            "p_mask": p_mask.to_tensor(1),
        }
        outputs = self._serve_token_ids(inputs)
        doc_offset = tf.cast(query.row_lengths(), tf.int32) + 2
        num_pieces = tf.cast(ids.row_lengths(), tf.int32)
        start, end, score = self._best_span(outputs, doc_offset, num_pieces)
        found = score > _NO_SPAN / 2
        result = {"score": score}
        if self.model.version_2_with_negative:
            result["no_answer_score"] = outputs["cls_logits"]
            found &= outputs["cls_logits"] < self.null_score_diff_threshold
        piece_start = tf.gather(starts, tf.maximum(start - doc_offset, 0), batch_dims=1)
        piece_end = tf.gather(ends, tf.maximum(end - doc_offset, 0), batch_dims=1)
        byte_start = tf.cast(tf.where(found, piece_start, 0), tf.int32)
        byte_end = tf.cast(tf.where(found, piece_end, 0), tf.int32)
        result["answer_text"] = tf.strings.substr(context, byte_start, byte_end - byte_start)
        before = tf.strings.substr(context, tf.zeros_like(byte_start), byte_start)
        char_start = tf.strings.length(before, unit="UTF8_CHAR")
        result["answer_start"] = tf.where(found, char_start, -1)
        result["answer_end"] = tf.where(found, char_start + tf.strings.length(result["answer_text"], unit="UTF8_CHAR"),
                                        -1)
        return result

    def _valid(self, start, end, doc_offset, num_pieces):
        """Whether sequence positions (start, end) [B, ...] are a span of the paragraph part."""
        offset, limit = doc_offset[:, tf.newaxis], (doc_offset + num_pieces)[:, tf.newaxis]
        if start.shape.rank == 3:
            offset, limit = offset[:, tf.newaxis], limit[:, tf.newaxis]
        return ((start >= offset) & (end < limit) & (end >= start) & (end - start < self.max_answer_length))

    def _best_span(self, outputs, doc_offset, num_pieces):
        if self.model.version_2_with_negative:
            start_index, end_index = outputs["start_top_index"], outputs["end_top_index"]
            ends_per_start = tf.shape(end_index)[1] // tf.shape(start_index)[1]
            starts = tf.repeat(start_index, ends_per_start, axis=1)
            scores = tf.repeat(outputs["start_top_log_probs"], ends_per_start, axis=1) + outputs["end_top_log_probs"]
            scores = tf.where(self._valid(starts, end_index, doc_offset, num_pieces), scores, _NO_SPAN)
            best = tf.argmax(scores, axis=1, output_type=tf.int32)
            return (tf.gather(starts, best, batch_dims=1), tf.gather(end_index, best, batch_dims=1),
                    tf.reduce_max(scores, axis=1))
        start_logits, end_logits = outputs["start_logits"], outputs["end_logits"]
        length = tf.shape(start_logits)[1]
        positions = tf.range(length)
        starts = tf.broadcast_to(positions[tf.newaxis, :, tf.newaxis], [tf.shape(start_logits)[0], length, length])
        ends = tf.broadcast_to(positions[tf.newaxis, tf.newaxis, :], tf.shape(starts))
        scores = start_logits[:, :, tf.newaxis] + end_logits[:, tf.newaxis, :]
        scores = tf.reshape(tf.where(self._valid(starts, ends, doc_offset, num_pieces), scores, _NO_SPAN),
                            [tf.shape(start_logits)[0], -1])
        best = tf.argmax(scores, axis=1, output_type=tf.int32)
        return best // length, best % length, tf.reduce_max(scores, axis=1)

    def _serve_token_ids(self, inputs):
        return self.model(inputs, training=False)

    def signatures(self):
        return {
            "serving_default": self.serve_text.get_concrete_function(),
            TOKEN_IDS_SIGNATURE: self.serve_token_ids.get_concrete_function(),
        }


def export_squad(model, spm_model_file, export_dir, do_lower_case=True, max_seq_length=384, max_query_length=64,
                 max_answer_length=30, null_score_diff_threshold=None, version=None):
    """Writes `<export_dir>/<version>/` for a float32 `AlbertQuestionAnswering`; returns that path."""
    module = SquadServingModule(model, spm_model_file, do_lower_case=do_lower_case, max_seq_length=max_seq_length,
                                max_query_length=max_query_length, max_answer_length=max_answer_length,
                                null_score_diff_threshold=null_score_diff_threshold)
    return save_versioned(module, export_dir, signatures=module.signatures(), version=version)
