"""`MultipleChoicePreprocessor`: a RACE question as raw text -> `AlbertMultipleChoice`'s option rows."""

import keras
import tensorflow as tf

from albert_tf.preprocessors.graph_packing import type_id_rows
from albert_tf.preprocessors.option_text import question_with_options
from albert_tf.preprocessors.packing import choice_kept_lengths, special_tokens
from albert_tf.preprocessors.text_preprocessor import TextPreprocessor


@keras.saving.register_keras_serializable(package="albert_tf")
class MultipleChoicePreprocessor(TextPreprocessor):
    """(article, question, options) strings -> `input_word_ids`, `input_mask`, `input_type_ids` int32
    [batch, options, length]: each option's row `[CLS] article [SEP] question+option [SEP]` built once,
    with the ids of `race.features.choice_rows` (the text keeps its last `max_qa_length` ids, the
    article its first ids that fit).

    `x` is a tuple of `article` [B], `question` [B] and `options` [B, K] (or one question: scalars
    and [K]); the call convention is `TextPreprocessor`'s. `padding` is "fixed" (to
    `sequence_length`) or "dynamic" (to the batch's longest row), as the RACE SavedModel does.
    """

    def __init__(self, spm_model_file, sequence_length=512, max_qa_length=128, do_lower_case=True,
                 padding="fixed", **kwargs):
        if not 1 <= max_qa_length <= sequence_length - special_tokens(2):
            raise ValueError(f"RACE rows need 1 <= max_qa_length <= sequence_length - 3, got {max_qa_length} "
                             f"and {sequence_length}")
        super().__init__(spm_model_file, sequence_length, do_lower_case, padding, **kwargs)
        self.max_qa_length = max_qa_length

    def model_inputs(self, texts):
        article, question, options = texts
        num_options = tf.shape(options)[1]
        qa = tf.cast(self.tokenizer(question_with_options(question, options)), tf.int32)
        context = tf.gather(tf.cast(self.tokenizer(article), tf.int32), tf.repeat(tf.range(tf.size(article)),
                                                                                    num_options))
        keep_context, keep_qa = choice_kept_lengths(context.row_lengths(), qa.row_lengths(), self.sequence_length,
                                                    self.max_qa_length, tf.minimum, tf.maximum)
        qa = tf.ragged.boolean_mask(qa, tf.ragged.range(qa.row_lengths()) >= (qa.row_lengths() - keep_qa)[:, None])
        context = tf.ragged.boolean_mask(context, tf.ragged.range(context.row_lengths()) < keep_context[:, None])
        word_ids, type_ids = type_id_rows([context, qa], self.tokenizer.cls_id, self.tokenizer.sep_id)
        fixed = self.padding == "fixed"

        def by_question(ragged, pad):
            dense = ragged.to_tensor(pad, shape=[None, self.sequence_length] if fixed else None)
            return tf.reshape(dense, [-1, num_options, self.sequence_length if fixed else tf.shape(dense)[1]])

        return {"input_word_ids": by_question(word_ids, self.tokenizer.pad_id),
                "input_mask": by_question(tf.ones_like(word_ids), 0), "input_type_ids": by_question(type_ids, 0)}

    def get_config(self):
        config = super().get_config()
        config["max_qa_length"] = self.max_qa_length
        return config
