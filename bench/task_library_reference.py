"""What the TFLite Task Library's `BertQuestionAnswerer` (tflite-support 0.4.4) does around the
model, in Python: to check our `.tflite` against our own model on the same tokens, and to count
the contexts it truncates. Written from its documented behaviour (bert_question_answerer.cc);
`run` in bench/task_library_qa.py runs the library itself.

Preprocessing: the context is split on ' ' only (runs of spaces give no empty words); words and
question are ASCII-lowercased and tokenized (each word on its own), the question cut to 64
pieces, the context to 384 - question - 3; `[CLS] question [SEP] context [SEP]`, segment ids 0
then 1 from the first context piece to the last [SEP], zero-padded to 384.
Postprocessing: the top 5 starts and top 5 ends by logit over all 384 positions; a pair counts if
both are context pieces, end >= start and it spans at most 32 pieces; scored start + end logit,
best 5 kept; the answer is the original words from the start's to the end's, joined by ' '.
"""

import numpy as np

SEQ_LENGTH = 384
MAX_QUERY_LENGTH = 64
PREDICTED_ANSWERS = 5
MAX_ANSWER_LENGTH = 32


def _ascii_lower(text):
    return "".join(char.lower() if char.isascii() else char for char in text)


def task_library_inputs(context, question, tokenize, cls_id, sep_id):
    """(inputs, words, piece_words, truncated): `inputs` {"input_word_ids", "input_mask",
    "input_type_ids"} int32 [1, 384] as the Task Library fills them; `words`, the context's
    original words; `piece_words` {position: word index} of each context piece kept; `truncated`,
    whether context pieces were cut. `tokenize(text)` gives the piece ids of a text."""
    words = [word for word in context.split(" ") if word]
    query = tokenize(_ascii_lower(question))[:MAX_QUERY_LENGTH]
    doc, doc_words = [], []
    for index, word in enumerate(words):
        pieces = tokenize(_ascii_lower(word))
        doc += pieces
        doc_words += [index] * len(pieces)
    room = SEQ_LENGTH - len(query) - 3
    truncated = len(doc) > room
    doc, doc_words = doc[:room], doc_words[:room]
    ids = [cls_id] + query + [sep_id] + doc + [sep_id]
    type_ids = [0] * (len(query) + 2) + [1] * (len(doc) + 1)
    padding = [0] * (SEQ_LENGTH - len(ids))
    inputs = {"input_word_ids": ids + padding, "input_mask": [1] * len(ids) + padding,
              "input_type_ids": type_ids + padding}
    piece_words = {len(query) + 2 + i: word for i, word in enumerate(doc_words)}
    return ({name: np.array([value], np.int32) for name, value in inputs.items()}, words, piece_words, truncated)


def task_library_answers(start_logits, end_logits, words, piece_words, predicted_answers=PREDICTED_ANSWERS):
    """The Task Library's answers from logits [384]: at most 5 {"text", "start", "end", "logit"},
    best first (`predicted_answers=None`: from all starts and ends, every allowed span)."""
    starts = np.argsort(-np.asarray(start_logits), kind="stable")[:predicted_answers]
    ends = np.argsort(-np.asarray(end_logits), kind="stable")[:predicted_answers]
    answers = []
    for start in starts:
        for end in ends:
            if start in piece_words and end in piece_words and start <= end < start + MAX_ANSWER_LENGTH:
                answers.append({"text": " ".join(words[piece_words[start]:piece_words[end] + 1]),
                                "start": int(start), "end": int(end),
                                "logit": float(start_logits[start]) + float(end_logits[end])})
    return sorted(answers, key=lambda answer: -answer["logit"])[:predicted_answers]
