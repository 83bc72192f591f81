"""SQuAD's window rules, defined once for the feature files (`squad.features`) and the export's graph
(`serving.squad_windows`): answer alignment keeps the training side in Python, so no one in-graph
object can serve both, but both cut and pack windows by `SquadWindowing`."""

import dataclasses

from albert_tf.preprocessors.packing import PAIR_TYPE_IDS, packed_ids, part_values, special_tokens

# The p_mask of each part of `[CLS] question [SEP] window [SEP]`: 1 where no answer may start or end.
P_MASK_PARTS = (0, 1, 1, 0, 1)


@dataclasses.dataclass(frozen=True)
class SquadWindowing:
    """The question keeps its first `max_query_length` pieces; the paragraph is read in windows of
    `doc_budget` pieces starting `stride` pieces apart, each packed `[CLS] question [SEP] window [SEP]`
    into at most `max_seq_length` ids (the original's `convert_examples_to_features`)."""

    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64

    def __post_init__(self):
        for name in ("max_seq_length", "doc_stride", "max_query_length"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"SQuAD windows need a positive integer {name}, got {value!r}")

    def check_room(self, query_length):
        """Raises unless a window after a `query_length`-piece question holds a paragraph piece."""
        if self.doc_budget(query_length) < 1:
            raise ValueError(f"max_seq_length {self.max_seq_length} leaves no room for the paragraph after a "
                             f"{query_length}-piece question (max_query_length {self.max_query_length})")

    def doc_budget(self, query_length):
        """Paragraph pieces per window after a `query_length`-piece question (ints or tensors)."""
        return self.max_seq_length - query_length - special_tokens(2)

    def stride(self, doc_budget, minimum=min):
        """How many pieces apart windows start (`minimum=tf.minimum` on tensors)."""
        return minimum(doc_budget, self.doc_stride)

    @staticmethod
    def doc_offset(query_length):
        """The position of a window's first paragraph piece: after `[CLS] question [SEP]`."""
        return special_tokens(1) + query_length

    @staticmethod
    def packed_window(query_ids, window_ids, cls_id, sep_id):
        """(input_ids, segment_ids, p_mask) of one window, as lists."""
        input_ids, segment_ids = packed_ids(query_ids, window_ids, cls_id, sep_id)
        return input_ids, segment_ids, part_values(len(query_ids), len(window_ids), P_MASK_PARTS)

    @staticmethod
    def part_values():
        """The values per part the graph packs windows with: type ids, then p_mask (`packed_rows`)."""
        return PAIR_TYPE_IDS, P_MASK_PARTS
