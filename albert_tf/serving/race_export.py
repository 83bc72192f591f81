"""A fine-tuned RACE model as a SavedModel that picks one of four options from raw text.

Signatures:
    `serving_default`: `article`, `question` string [batch], `options` string [batch, 4]
        -> `logits`, `probabilities` float32 [batch, 4] (softmax over the options) and `choice`
        int32 [batch] (the index of the chosen option, 0-3 for A-D). An empty batch gets empty outputs.
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, 4, seq], all of
        one shape -> the same outputs, for clients that build the rows themselves.
A request holds at most `max_batch_size` questions (4 model rows each), a string at most
`max_string_bytes` bytes (`request_checks`); past them it is an InvalidArgument error.

The rows are built in the graph as `race.features.choice_rows` builds them: the option fills the
question's "_" blanks (else follows it after a space), that text keeps its last `max_qa_length`
pieces, the article its first pieces that fit, `[CLS] article [SEP] question+option [SEP]`.
Each batch is padded to its longest row. The kernel set is recorded as in the classifier export.
"""

import tensorflow as tf

from albert_tf.choices import MAX_RACE_QUESTIONS, MAX_STRING_BYTES
from albert_tf.race.examples import NUM_CHOICES
from albert_tf.serving.export_module import ExportModule
from albert_tf.serving.packed_pair import packed_pair
from albert_tf.serving.versioned_dir import save_versioned
from albert_tf.text.preprocessing import AlbertTextTokenizer


def question_with_options(question, options):
    """`examples.question_with_option` in graph ops: question [B], options [B, 4] -> texts [B * 4]."""
    questions = tf.repeat(question, NUM_CHOICES)
    options = tf.reshape(options, [-1])
    parts = tf.strings.split(questions, sep="_")  # as str.split: "a_b" -> ["a", "b"]
    is_last = tf.ragged.range(parts.row_lengths()).flat_values + 1 == tf.gather(parts.row_lengths(),
                                                                                parts.value_rowids())
    fill = tf.where(is_last, "", tf.gather(options, parts.value_rowids()))
    filled = tf.strings.reduce_join(parts.with_flat_values(tf.strings.join([parts.flat_values, fill])), axis=1)
    appended = tf.strings.join([questions, options], separator=" ")
    return tf.where(tf.strings.regex_full_match(questions, "(?s).*_.*"), filled, appended)


class RaceServingModule(ExportModule):
    """Wraps an `AlbertMultipleChoice` with in-graph row building and named outputs."""

    token_shape = (None, NUM_CHOICES, None)

    def __init__(self, model, spm_model_file, do_lower_case=True, max_seq_length=512, max_qa_length=128,
                 kernels="reference", max_batch_size=MAX_RACE_QUESTIONS, max_string_bytes=MAX_STRING_BYTES):
        if not 1 <= max_qa_length <= max_seq_length - 3:
            raise ValueError(f"a RACE export needs 1 <= max_qa_length <= max_seq_length - 3, got {max_qa_length} "
                             f"and {max_seq_length}")
        super().__init__(model, kernels, max_batch_size=max_batch_size, max_string_bytes=max_string_bytes)
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        self.max_seq_length = max_seq_length
        self.max_qa_length = max_qa_length

    def text_specs(self):
        return [tf.TensorSpec([None], tf.string, name="article"), tf.TensorSpec([None], tf.string, name="question"),
                tf.TensorSpec([None, NUM_CHOICES], tf.string, name="options")]

    def _serve_text(self, article, question, options):
        texts = self.checked_text({"article": article, "question": question, "options": options})
        article, question, options = texts["article"], texts["question"], texts["options"]
        qa = tf.cast(self.tokenizer(question_with_options(question, options)), tf.int32)
        qa = tf.ragged.boolean_mask(qa, tf.ragged.range(qa.row_lengths())
                                    >= (qa.row_lengths() - self.max_qa_length)[:, tf.newaxis])
        context = tf.gather(tf.cast(self.tokenizer(article), tf.int32), tf.repeat(tf.range(tf.size(article)),
                                                                                    NUM_CHOICES))
        budget = tf.maximum(self.max_seq_length - qa.row_lengths() - 3, 0)
        context = tf.ragged.boolean_mask(context, tf.ragged.range(context.row_lengths())
                                         < tf.cast(budget, context.row_splits.dtype)[:, tf.newaxis])
        word_ids, type_ids = packed_pair(context, qa, self.tokenizer.cls_id, self.tokenizer.sep_id, (0, 0, 0, 1, 1))

        def by_question(ragged, pad):
            dense = ragged.to_tensor(pad)
            return tf.reshape(dense, [-1, NUM_CHOICES, tf.shape(dense)[1]])

        return self.named_outputs(self.model_outputs({"input_word_ids": by_question(word_ids, self.tokenizer.pad_id),
                                                      "input_mask": by_question(tf.ones_like(word_ids), 0),
                                                      "input_type_ids": by_question(type_ids, 0)}))

    def named_outputs(self, outputs):
        return {"logits": outputs, "probabilities": tf.nn.softmax(outputs, axis=-1),
                "choice": tf.argmax(outputs, axis=-1, output_type=tf.int32)}


def export_race(model, spm_model_file, export_dir, do_lower_case=True, max_seq_length=512, max_qa_length=128,
                version=None, kernels="reference", max_batch_size=MAX_RACE_QUESTIONS,
                max_string_bytes=MAX_STRING_BYTES):
    """Writes `<export_dir>/<version>/` for an `AlbertMultipleChoice` (traced in float32, whatever its
    own dtype policy), serving requests of at most `max_batch_size` questions and `max_string_bytes`
    bytes per string; returns that path."""
    module = RaceServingModule(model, spm_model_file, do_lower_case=do_lower_case, max_seq_length=max_seq_length,
                               max_qa_length=max_qa_length, kernels=kernels, max_batch_size=max_batch_size,
                               max_string_bytes=max_string_bytes)
    return save_versioned(module, export_dir, signatures=module.signatures(), version=version)
