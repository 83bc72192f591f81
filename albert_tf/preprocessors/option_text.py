"""RACE's second segment, a question with one of its options, written once in graph ops: the examples
read for training (`race.examples`) and the preprocessor of every export build it here."""

import tensorflow as tf


def question_with_options(question, options):
    """The original's rule: each option fills the question's "_" blanks, else follows it after a space.

    question string [B], options [B, K] -> texts [B * K], each question's K options in turn.
    """
    questions = tf.repeat(question, tf.shape(options)[1])
    options = tf.reshape(options, [-1])
    parts = tf.strings.split(questions, sep="_")  # as str.split: "a_b" -> ["a", "b"]
    is_last = tf.ragged.range(parts.row_lengths()).flat_values + 1 == tf.gather(parts.row_lengths(),
                                                                                parts.value_rowids())
    fill = tf.where(is_last, "", tf.gather(options, parts.value_rowids()))
    filled = tf.strings.reduce_join(parts.with_flat_values(tf.strings.join([parts.flat_values, fill])), axis=1)
    appended = tf.strings.join([questions, options], separator=" ")
    return tf.where(tf.strings.regex_full_match(questions, "(?s).*_.*"), filled, appended)
