"""LiteRT models that MediaPipe Tasks runs on raw text: a fine-tuned classifier for `TextClassifier`,
the encoder for `TextEmbedder` (Android, iOS, web and Python alike).

What MediaPipe's BERT preprocessing does to a text decides the model's form: it lowercases one
text, tokenizes it with the SentencePiece model named in the metadata (`metadata`; ours with
ALBERT's normalization compiled into its own, `folded_sentencepiece`), packs `[CLS] pieces [SEP]`,
truncates and zero-pads to the sequence length of the model's static input shape and sets every
segment id to 0. So the models take int32 [1, seq_length] inputs, and the classifier outputs the
softmax of its logits: MediaPipe reports the output tensor as the scores, unchanged.
"""

import tensorflow as tf

from albert_tf.choices import EMBEDDING_POOLINGS
from albert_tf.serving.litert.conversion import litert_model
from albert_tf.serving.litert.metadata import (LABELS_FILE, SENTENCEPIECE_FILE, SINGLE_TEXT_INPUTS, input_roles,
                                               metadata_flatbuffer, with_metadata)
from albert_tf.text.folded_sentencepiece import folded_model

DEFAULT_SEQ_LENGTH = 128
CLASSIFIER_OUTPUT = "probabilities"
EMBEDDER_OUTPUT = "embedding"


def check_single_text_task(task):
    """Raises ValueError unless `task` (a `GlueTask`) classifies one text, the only input MediaPipe's
    `TextClassifier` gives a model."""
    if task.is_regression:
        raise ValueError(f"{task.name} scores a similarity (regression); MediaPipe's TextClassifier returns "
                         "class probabilities of one text")
    if len(task.text_feature_names) != 1:
        raise ValueError(f"{task.name} classifies a pair of texts ({', '.join(task.text_feature_names)}); "
                         "MediaPipe's TextClassifier takes one text")


def check_seq_length(seq_length, config):
    """Raises ValueError unless `seq_length` fits `config` (an `AlbertConfig`): [CLS], a piece, [SEP]."""
    if not 3 <= seq_length <= config.max_position_embeddings:
        raise ValueError(f"sequence length must be from 3 to the model's max_position_embeddings "
                         f"{config.max_position_embeddings}, got {seq_length}")


def check_vocabulary(config, spm_model_file):
    """Raises ValueError unless `config` (an `AlbertConfig`) has as many token ids as
    `spm_model_file` has pieces: the runtime tokenizes with that model alone, so any other
    vocabulary reads other tokens than the model was trained on (or ids past its table)."""
    from albert_tf.text.tokenization import AlbertTokenizer  # pylint: disable=g-import-not-at-top

    pieces = AlbertTokenizer(spm_model_file).vocab_size
    if config.vocab_size != pieces:
        raise ValueError(f"the model's vocab_size {config.vocab_size} differs from the {pieces} pieces of the "
                         f"SentencePiece model {spm_model_file}")


def check_label_names(label_names, num_labels):
    """Raises ValueError unless `label_names` are `num_labels` (at least 2) distinct names, each
    non-empty, on one line and without NUL: the label file holds one name per line, and a runtime
    reports a category by its name."""
    if len(label_names) != num_labels:
        raise ValueError(f"{len(label_names)} label names for a classifier of {num_labels} labels")
    if num_labels < 2:
        raise ValueError(f"a classifier needs at least 2 labels, got {list(label_names)}")
    for label in label_names:
        if not isinstance(label, str) or not label.strip() or any(char in label for char in "\r\n\x00"):
            raise ValueError(f"label name {label!r}: expected a non-empty name on one line, without NUL")
    duplicates = sorted({label for label in label_names if label_names.count(label) > 1})
    if duplicates:
        raise ValueError(f"label names {duplicates} appear more than once: each label needs its own name")


def with_text_metadata(content, spm_model_file, name, description, outputs, labels=None,
                       input_descriptions=SINGLE_TEXT_INPUTS):
    """`content` (a `.tflite` of our three token inputs) with the metadata and files MediaPipe's
    text tasks and the Task Library read: `outputs`, (name, description) of each output in the
    model's order; `spm_model_file` with ALBERT's normalization in its own (`folded_sentencepiece`)
    as SENTENCEPIECE_FILE; for a classifier `labels`, its label names."""
    metadata = metadata_flatbuffer(name, description, input_roles(content), SENTENCEPIECE_FILE, outputs,
                                   labels_file=None if labels is None else LABELS_FILE,
                                   input_descriptions=input_descriptions)
    with tf.io.gfile.GFile(spm_model_file, "rb") as handle:
        files = {SENTENCEPIECE_FILE: folded_model(handle.read())}  # MediaPipe runs SentencePiece alone
    if labels is not None:
        files[LABELS_FILE] = "".join(f"{label}\n" for label in labels).encode()
    return with_metadata(content, metadata, files)


def mediapipe_classifier(classifier, spm_model_file, label_names, seq_length=DEFAULT_SEQ_LENGTH,
                         quantization="dynamic_int8"):
    """The `.tflite` (bytes) of `classifier` (an `AlbertClassifier`) for MediaPipe's `TextClassifier`:
    int32 [1, seq_length] inputs, `probabilities` [1, labels] out, `label_names` in the label file."""
    check_seq_length(seq_length, classifier.albert.config)
    check_label_names(list(label_names), classifier.num_labels)
    check_vocabulary(classifier.albert.config, spm_model_file)

    def probabilities(model, inputs):
        return {CLASSIFIER_OUTPUT: tf.nn.softmax(model(inputs, training=False)["logits"], axis=-1)}

    content = litert_model(classifier, probabilities, quantization, shape=(1, seq_length))
    return with_text_metadata(content, spm_model_file, "ALBERT text classifier",
                               f"A fine-tuned ALBERT classifying one text of at most {seq_length} tokens.",
                               [(CLASSIFIER_OUTPUT, "Probability of each label.")], labels=label_names)


def mediapipe_embedder(albert, spm_model_file, seq_length=DEFAULT_SEQ_LENGTH, quantization="dynamic_int8",
                       pooling="mean"):
    """The `.tflite` (bytes) of `albert` (an `AlbertModel`) for MediaPipe's `TextEmbedder`: int32
    [1, seq_length] inputs, `embedding` [1, hidden_size] out: the mean of the last layer over the
    text's tokens (`pooling="mean"`, the better sentence embedding of a pretrained ALBERT on STS-B
    dev: bench/embedding_pooling.py) or the pooled output (`"pooled"`)."""
    check_seq_length(seq_length, albert.config)
    check_vocabulary(albert.config, spm_model_file)

    def embedding(model, inputs):
        outputs = model(inputs, training=False)
        if pooling == "pooled":
            return {EMBEDDER_OUTPUT: outputs["pooled_output"]}
        mask = tf.cast(inputs["input_mask"], outputs["sequence_output"].dtype)[:, :, None]
        return {EMBEDDER_OUTPUT: tf.reduce_sum(outputs["sequence_output"] * mask, 1) / tf.reduce_sum(mask, 1)}

    if pooling not in EMBEDDING_POOLINGS:
        raise ValueError(f"pooling must be one of {list(EMBEDDING_POOLINGS)}, got {pooling!r}")
    content = litert_model(albert, embedding, quantization, shape=(1, seq_length))
    return with_text_metadata(content, spm_model_file, "ALBERT text embedder",
                               f"ALBERT's {pooling} output of one text of at most {seq_length} tokens.",
                               [(EMBEDDER_OUTPUT, "The text's embedding.")])
