"""The packing rules of every task, written once in plain arithmetic: the Python feature builders call
them on ints and lists, the in-graph preprocessors on tensors (with `minimum=tf.minimum`,
`maximum=tf.maximum`), so training and serving cannot build different rows.

Layout: `[CLS] first [SEP] (second [SEP])`, five parts, type id 0 up to the first [SEP], 1 after.
No TensorFlow here: the data builder's worker processes import this module.
"""

# The type id of each part of `[CLS] first [SEP] second [SEP]`.
PAIR_TYPE_IDS = (0, 0, 0, 1, 1)


def special_tokens(num_segments):
    """How many ids the layout adds to `num_segments` (1 or 2) segments: [CLS] and a [SEP] each."""
    return 1 + num_segments


def pair_kept_lengths(first_length, second_length, budget, minimum=min, maximum=max):
    """(ids kept of first, of second) so that at most `budget` remain, each kept from its start.

    The closed form of the original GLUE code's `_truncate_seq_pair` (pop from the longer, the
    second on ties): the shorter stays whole if it fits in half the budget, else the budget splits
    ceil/floor, the first taking the larger half.
    """
    keep_second = minimum(second_length, maximum(budget // 2, budget - first_length))
    return minimum(first_length, budget - keep_second), keep_second


def choice_kept_lengths(context_length, option_length, sequence_length, max_option_length, minimum=min,
                        maximum=max):
    """(context ids kept from its start, question+option ids kept from its end) of a RACE row, as the
    original: the option text keeps its last `max_option_length` ids, the context what then fits."""
    keep_option = minimum(option_length, max_option_length)
    return minimum(context_length, maximum(sequence_length - keep_option - special_tokens(2), 0)), keep_option


def part_values(first_length, second_length, values):
    """A row holding each part's value (one of `values` per part, as `PAIR_TYPE_IDS`) at its positions;
    `second_length=None` is a single segment (the first three parts)."""
    lengths = (1, first_length, 1) if second_length is None else (1, first_length, 1, second_length, 1)
    return [value for length, value in zip(lengths, values) for _ in range(length)]


def packed_ids(first, second, cls_id, sep_id):
    """(word ids, type ids) of `[CLS] first [SEP] (second [SEP])` for id lists (`second` may be None)."""
    word_ids = [cls_id] + list(first) + [sep_id]
    if second is not None:
        word_ids += list(second) + [sep_id]
    return word_ids, part_values(len(first), None if second is None else len(second), PAIR_TYPE_IDS)
