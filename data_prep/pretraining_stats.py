"""Counters the builder keeps while it works, and the JSON summary written beside the output.

Why: the original printed nothing about the data it made, so its effective masking rate (about
3.9% at 512 tokens, google-research/albert #51) and its NSP-style negatives inside SOP (#234)
went unnoticed. Counters are plain integers so that shards can be summed in any order; an
example (of a line worth a warning) is the input's first, whatever order shards are merged in.
"""

import collections


class PretrainingStats:
    """Integer counters plus n-gram histograms; `merge` adds another instance's counts.

    `ngram_drawn` counts every n drawn from p(n) (the distribution the algorithm samples);
    `ngram_masked` counts the whole-word units of the spans actually masked, which favours
    short spans further: long ones overlap earlier spans or overshoot the budget more often.
    """

    # Characters of an example line kept for the report.
    EXAMPLE_CHARS = 120

    def __init__(self, counts=None, ngram_drawn=None, ngram_masked=None, examples=None):
        self.counts = collections.Counter(counts or {})
        self.examples = dict(examples or {})
        self.ngram_drawn = collections.Counter({int(k): v for k, v in (ngram_drawn or {}).items()})
        self.ngram_masked = collections.Counter({int(k): v for k, v in (ngram_masked or {}).items()})

    def count(self, name, amount=1):
        self.counts[name] += amount

    def keep_example(self, name, chunk_index, path, byte, line):
        """Keeps `line` as the example of `name` if it comes first in the input (chunk, then byte)."""
        example = {"chunk": chunk_index, "file": path, "byte": byte, "text": line.strip()[:self.EXAMPLE_CHARS]}
        self._keep_first(name, example)

    def _keep_first(self, name, example):
        kept = self.examples.get(name)
        if kept is None or (example["chunk"], example["byte"]) < (kept["chunk"], kept["byte"]):
            self.examples[name] = example

    def merge(self, other):
        for name, example in other.examples.items():
            self._keep_first(name, example)
        self.counts.update(other.counts)
        self.ngram_drawn.update(other.ngram_drawn)
        self.ngram_masked.update(other.ngram_masked)
        return self

    def to_dict(self):
        """Raw counters only: what a shard records so that a rerun can skip it."""
        return {
            "counts": dict(sorted(self.counts.items())),
            "ngram_drawn": {str(k): v for k, v in sorted(self.ngram_drawn.items())},
            "ngram_masked": {str(k): v for k, v in sorted(self.ngram_masked.items())},
            "examples": dict(sorted(self.examples.items())),
        }

    @classmethod
    def from_dict(cls, data):
        return cls(data["counts"], data["ngram_drawn"], data["ngram_masked"], data.get("examples"))

    def summary(self):
        """Counters plus the derived rates a reader wants to check (see docs/data.md)."""
        counts = self.counts
        instances = counts["instances"]
        tokens = counts["tokens"]
        masked = counts["masked_as_mask_token"] + counts["masked_kept"] + counts["masked_as_random_token"]
        pairs = counts["pair_in_order"] + counts["pair_swapped"] + counts["pair_random_document"]
        return {
            "instances": instances,
            "documents": counts["documents"],
            "lines": counts["lines"],
            "non_utf8_lines": counts["non_utf8_lines"],
            "long_lines": counts["long_lines"],
            "long_line_example": self.examples.get("long_lines"),
            "input_bytes": counts["input_bytes"],
            "tokens": tokens,
            "mean_tokens_per_instance": _ratio(tokens, instances),
            "masked_tokens": masked,
            "masked_lm_budget": counts["masked_lm_budget"],
            "effective_masking_rate": _ratio(masked, tokens),
            "masking_rate_excluding_special_tokens": _ratio(masked, tokens - 3 * instances),
            "mask_replacement_fractions": {
                "mask_token": _ratio(counts["masked_as_mask_token"], masked),
                "kept": _ratio(counts["masked_kept"], masked),
                "random_token": _ratio(counts["masked_as_random_token"], masked),
            },
            "ngram_drawn_fractions": _fractions(self.ngram_drawn),
            "ngram_masked_span_fractions": _fractions(self.ngram_masked),
            "sentence_pairs": {
                "in_order": counts["pair_in_order"],
                "swapped": counts["pair_swapped"],
                "random_document": counts["pair_random_document"],
                "label_1_fraction": _ratio(counts["pair_swapped"] + counts["pair_random_document"], pairs),
            },
            "truncated_instances": counts["truncated_instances"],
            "truncated_tokens": counts["truncated_tokens"],
            "short_target_fraction": _ratio(counts["short_target_instances"], instances),
            "single_token_chunks_dropped": counts["single_token_chunks_dropped"],
            "permuted_tokens": counts["permuted_tokens"],
            "raw": self.to_dict(),
        }


def _ratio(numerator, denominator):
    return numerator / denominator if denominator else 0.0


def _fractions(histogram):
    total = sum(histogram.values())
    return {str(k): _ratio(v, total) for k, v in sorted(histogram.items())}
