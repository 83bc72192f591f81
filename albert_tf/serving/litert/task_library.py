"""A fine-tuned SQuAD v1.1 model as the `.tflite` that the TFLite Task Library's
`BertQuestionAnswerer` (Android, iOS, Python; `tflite-support`) answers with on raw text.

What the Task Library does decides the form. It splits the context on spaces, ASCII-lowercases
the words and the question and tokenizes them with the SentencePiece model named in the metadata
(ours with ALBERT's normalization in its own, `folded_sentencepiece`); it packs `[CLS] question
[SEP] context [SEP]` (the question cut to 64 pieces, the context to what is left of 384, no
second window) into int32 [1, 384] inputs `ids`, `mask`, `segment_ids`, and ranks the top 5
starts x top 5 ends of float32 [1, 384] outputs `end_logits`, `start_logits` by their sum. So the
model is the v1.1 head, whose start and end logits are scored independently; the v2.0 head's end
logits depend on the start it is given, and its no-answer score has no place in that output.
"""

from albert_tf.serving.litert.conversion import litert_model
from albert_tf.serving.litert.mediapipe import check_vocabulary, with_text_metadata
from albert_tf.serving.litert.metadata import signature_output_names

# The Task Library's fixed sequence length (kMaxSeqLen) and question length (kMaxQueryLen).
SEQ_LENGTH = 384
MAX_QUERY_LENGTH = 64
OUTPUT_DESCRIPTIONS = {"end_logits": "Logit of each position ending the answer.",
                       "start_logits": "Logit of each position starting the answer."}
QUESTION_ANSWER_INPUTS = {"ids": "Token ids: [CLS] question [SEP] context [SEP], then 0s.",
                          "mask": "1 for a token, 0 for padding.",
                          "segment_ids": "0 for [CLS] question [SEP], 1 for context [SEP], 0 for padding."}


def check_question_answerer(version_2_with_negative, config):
    """Raises ValueError unless a SQuAD model of this head and `config` (an `AlbertConfig`) has the
    Task Library's form: the v1.1 head, and 384 positions."""
    if version_2_with_negative:
        raise ValueError("the Task Library's BertQuestionAnswerer adds independent start and end logits and "
                         "always answers; the SQuAD 2.0 head conditions its ends on the start and scores no-answer "
                         "(export a model fine-tuned without --version_2_with_negative)")
    if config.max_position_embeddings < SEQ_LENGTH:
        raise ValueError(f"the Task Library's BertQuestionAnswerer reads {SEQ_LENGTH} tokens, more than the model's "
                         f"max_position_embeddings {config.max_position_embeddings}")


def check_task_library_windows(max_seq_length, max_query_length):
    """Raises ValueError unless a model fine-tuned on windows of `max_seq_length` tokens with
    questions cut to `max_query_length` pieces reads the Task Library's windows as it was trained:
    positions it never saw, or questions cut elsewhere, change its answers."""
    if (max_seq_length, max_query_length) != (SEQ_LENGTH, MAX_QUERY_LENGTH):
        raise ValueError(f"the Task Library's BertQuestionAnswerer reads windows of {SEQ_LENGTH} tokens with questions "
                         f"cut to {MAX_QUERY_LENGTH} pieces; this model's are {max_seq_length} and {max_query_length} "
                         f"(fine-tune and export with --max_seq_length={SEQ_LENGTH} "
                         f"--max_query_length={MAX_QUERY_LENGTH})")


def task_library_question_answerer(model, spm_model_file, quantization="dynamic_int8"):
    """The `.tflite` (bytes) of `model` (an `AlbertQuestionAnswering`) for the Task Library's
    `BertQuestionAnswerer`: int32 [1, 384] token inputs, `end_logits` and `start_logits`
    float32 [1, 384] out, the tokenizer in the metadata."""
    check_question_answerer(model.version_2_with_negative, model.albert.config)
    check_vocabulary(model.albert.config, spm_model_file)

    def span_logits(task_model, inputs):
        # The v1.1 head reads no p_mask; the model's signature wants one.
        outputs = task_model({**inputs, "p_mask": inputs["input_word_ids"] * 0}, training=False)
        return {name: outputs[name] for name in OUTPUT_DESCRIPTIONS}

    # The runtime of tflite-support 0.4.4, the Task Library's last release, predates FULLY_CONNECTED v12.
    content = litert_model(model, span_logits, quantization, shape=(1, SEQ_LENGTH), per_channel_dense=False)
    outputs = [(name, OUTPUT_DESCRIPTIONS[name]) for name in signature_output_names(content)]
    return with_text_metadata(content, spm_model_file, "ALBERT question answerer",
                              f"A SQuAD fine-tuned ALBERT answering a question of at most {MAX_QUERY_LENGTH} "
                              f"pieces from a context, in {SEQ_LENGTH} tokens.", outputs,
                              input_descriptions=QUESTION_ANSWER_INPUTS)
