"""A fine-tuned SQuAD model as a SavedModel that answers raw questions about raw paragraphs.

Signatures:
    `serving_default`: `question`, `context` string [batch] -> `answer_text` string [batch],
        `answer_start`, `answer_end` int32 [batch] (character offsets into `context`, end
        exclusive; -1 when there is no answer), `score` float32 (start + end score of the span),
        and for SQuAD 2.0 `no_answer_score` (the lowest [CLS] answerability logit over the
        question's windows; "no answer" when it reaches the exported `null_score_diff_threshold`).
        An empty batch gets empty outputs.
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids`, `p_mask` int32
        [windows, seq], all of one shape -> the model's raw outputs, for clients that build windows
        themselves.
A request holds at most `max_batch_size` questions, `max_windows` windows (also the rows of
`serve_token_ids`) and `max_string_bytes` bytes per string (`request_checks`); past them it is an
InvalidArgument error, raised before the windows are built.

Everything runs in the graph (tensorflow-text), with the training tokenizer's normalisation.
The paragraph is split on whitespace with byte offsets, each word tokenized on its own (pieces
never cross a space), and a piece's characters are found by the lengths of the pieces before it
in its word; where normalisation changed a word's length (accents, some Unicode) the whole word
stands for each of its pieces. A paragraph longer than one window is read in `doc_stride`
windows and answered as `run_squad.py` answers it (`squad_windows`): the best span over all
windows, starting in its max-context window, from the top `n_best_size` starts x ends (v1.1) or
the model's start/end beam (v2.0), at most `max_answer_length` pieces long. Windows are padded
to `max_seq_length`, as in the feature files, so v1.1 ranks the same positions.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf.choices import MAX_BATCH_SIZE, MAX_STRING_BYTES, MAX_WINDOWS
from albert_tf.error_text import SettingError
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.preprocessors.graph_packing import packed_rows
from albert_tf.preprocessors.squad_windowing import SquadWindowing
from albert_tf.serving.export_module import ExportModule
from albert_tf.serving.squad_windows import NO_SPAN, Windows, beam_pairs, top_pairs
from albert_tf.serving.versioned_dir import save_versioned
from albert_tf.text.preprocessing import AlbertTextTokenizer, _char_classes
from albert_tf.text.tokenization import SPIECE_UNDERLINE, AlbertTokenizer


class SquadServingModule(ExportModule):
    """Wraps an `AlbertQuestionAnswering` with in-graph windowing and answer decoding."""

    token_input_names = INPUT_NAMES + ("p_mask",)
    token_rows_bound = "max_windows"

    def __init__(self, model, spm_model_file, do_lower_case=True, max_seq_length=384, doc_stride=128,
                 max_query_length=64, n_best_size=20, max_answer_length=30, null_score_diff_threshold=None,
                 max_batch_size=MAX_BATCH_SIZE, max_windows=MAX_WINDOWS,
                 max_string_bytes=MAX_STRING_BYTES, kernels="reference"):
        self.windowing = SquadWindowing(max_seq_length, doc_stride, max_query_length)
        self.windowing.check_room(max_query_length)  # for the longest question
        if min(n_best_size, max_answer_length) < 1:
            raise ValueError(f"a SQuAD export needs positive n_best_size and max_answer_length; got {n_best_size}, "
                             f"{max_answer_length}")
        if model.version_2_with_negative and null_score_diff_threshold is None:
            raise SettingError("a SQuAD 2.0 export needs {null_score_diff_threshold} (run_squad.py finds it on "
                               "the dev set)")
        super().__init__(model, kernels, max_batch_size=max_batch_size, max_windows=max_windows,
                         max_string_bytes=max_string_bytes)
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        pieces = AlbertTokenizer(spm_model_file).vocab
        self._piece_bytes = tf.constant([len(p.replace(SPIECE_UNDERLINE, "").encode("utf-8")) for p in pieces],
                                        tf.int64)
        self._whitespace = _char_classes()[0] + "+"
        self.max_seq_length = self.min_padding_length = max_seq_length  # the v2.0 beam's top-k needs positions
        self.n_best_size = n_best_size
        self.max_answer_length = max_answer_length
        self.null_score_diff_threshold = null_score_diff_threshold

    def text_specs(self):
        return [tf.TensorSpec([None], tf.string)] * 2

    def _context_pieces(self, context):
        """Ragged piece ids [B, (P)] of `context` and each piece's byte span in it."""
        # The split stops at a NUL byte: it splits a copy with each NUL read as \x01 (neither is
        # whitespace, lengths stay), and the words are cut from the context itself.
        _, word_starts, word_ends = tf_text.regex_split_with_offsets(
            tf.strings.regex_replace(context, r"\x00", "\x01"), self._whitespace)
        words = word_starts.with_flat_values(tf.strings.substr(
            tf.gather(context, word_starts.value_rowids()), word_starts.flat_values,
            word_ends.flat_values - word_starts.flat_values))
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
        texts = self.checked_text({"question": question, "context": context})
        question, context = texts["question"], texts["context"]
        query = tf.cast(self.tokenizer(question)[:, :self.windowing.max_query_length], tf.int32)
        ids, starts, ends = self._context_pieces(context)
        windows = Windows(tf.cast(query.row_lengths(), tf.int32), tf.cast(ids.row_lengths(), tf.int32),
                          self.windowing, self.max_windows)
        positions = tf.ragged.range(windows.start, windows.start + windows.length)  # paragraph pieces [N, (M)]
        first_piece = tf.gather(tf.cast(ids.row_starts(), tf.int32), windows.question)
        doc = positions.with_flat_values(tf.gather(tf.cast(ids.flat_values, tf.int32), (
            positions + first_piece[:, tf.newaxis]).flat_values))
        outputs = self.model_outputs(self._window_inputs(tf.gather(query, windows.question), doc))
        if self.model.version_2_with_negative:
            start, end, scores = beam_pairs(outputs)
        else:
            start, end, scores = top_pairs(outputs["start_logits"], outputs["end_logits"], self.n_best_size)
        valid = windows.valid(start, end, windows.max_context(self.max_seq_length), self.max_answer_length)
        start_piece, end_piece, score = windows.best_span(start, end, scores, valid)
        found = score > NO_SPAN / 2
        result = {"score": tf.cast(score, tf.float32)}
        if self.model.version_2_with_negative:
            # As the original: the question's no-answer score is its lowest over its windows.
            result["no_answer_score"] = tf.reduce_min(windows.by_question(outputs["cls_logits"], float("inf")), axis=1)
            found &= result["no_answer_score"] < self.null_score_diff_threshold
        byte_start = tf.where(found, _row_values(starts, start_piece), 0)
        byte_end = tf.where(found, _row_values(ends, end_piece), 0)
        result["answer_text"] = tf.strings.substr(context, byte_start, byte_end - byte_start)
        before = tf.strings.substr(context, tf.zeros_like(byte_start), byte_start)
        char_start = tf.strings.length(before, unit="UTF8_CHAR")
        result["answer_start"] = tf.where(found, char_start, -1)
        result["answer_end"] = tf.where(found, char_start + tf.strings.length(result["answer_text"], unit="UTF8_CHAR"),
                                        -1)
        return result

    def _window_inputs(self, query, doc):
        """`[CLS] question [SEP] window [SEP]` rows padded to max_seq_length, as the feature files hold them."""
        word_ids, type_ids, p_mask = packed_rows([query, doc], self.tokenizer.cls_id, self.tokenizer.sep_id,
                                                 *self.windowing.part_values())
        shape = [None, self.max_seq_length]
        return {
            "input_word_ids": word_ids.to_tensor(self.tokenizer.pad_id, shape=shape),
            "input_mask": tf.ones_like(word_ids).to_tensor(0, shape=shape),
            "input_type_ids": type_ids.to_tensor(0, shape=shape),
            "p_mask": p_mask.to_tensor(1, shape=shape),
        }


def export_squad(model, spm_model_file, export_dir, do_lower_case=True, max_seq_length=384, doc_stride=128,
                 max_query_length=64, n_best_size=20, max_answer_length=30, null_score_diff_threshold=None,
                 version=None, max_batch_size=MAX_BATCH_SIZE, max_windows=MAX_WINDOWS,
                 max_string_bytes=MAX_STRING_BYTES, kernels="reference"):
    """Writes `<export_dir>/<version>/` for an `AlbertQuestionAnswering` (traced in float32 with
    `kernels`, whatever it was trained with), serving requests of at most `max_batch_size`
    questions, `max_windows` windows and `max_string_bytes` bytes per string; returns that path."""
    module = SquadServingModule(model, spm_model_file, do_lower_case=do_lower_case, max_seq_length=max_seq_length,
                                doc_stride=doc_stride, max_query_length=max_query_length, n_best_size=n_best_size,
                                max_answer_length=max_answer_length,
                                null_score_diff_threshold=null_score_diff_threshold,
                                max_batch_size=max_batch_size, max_windows=max_windows,
                                max_string_bytes=max_string_bytes, kernels=kernels)
    return save_versioned(module, export_dir, signatures=module.signatures(), version=version)


def _row_values(ragged, index):
    """ragged[b, index[b]] for each row (0 where the row has no such value)."""
    flat = tf.cast(ragged.row_starts(), tf.int32) + index
    padded = tf.concat([ragged.flat_values, tf.zeros([1], ragged.flat_values.dtype)], 0)
    inside = (index >= 0) & (index < tf.cast(ragged.row_lengths(), tf.int32))
    return tf.cast(tf.gather(padded, tf.where(inside, flat, tf.size(ragged.flat_values))), tf.int32)
