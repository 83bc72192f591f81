"""Builds one output shard from its input chunks, or skips it when a previous run completed it.

A shard is written under a temporary name; its statistics go to a hidden sidecar
(`.<shard>.stats.json`) together with a fingerprint of the settings, and only then is the shard
renamed. A shard counts as complete when both exist and the fingerprint matches, so a rerun
after a crash or an interruption redoes only the missing shards.

Each (chunk, pass) has its own RNG seeded from (`--random_seed`, chunk index, pass index), and
the shard's records are shuffled across all its chunks and passes before they are written
(`record_shuffle`, seeded by `--random_seed` and the shard index), as the original shuffles all
instances: the bytes of a shard depend on the plan only, never on which process builds it or in
what order.
"""

import json
import random

from albert_tf.json_text import parse_json
from data_prep import corpus, tfrecord
from data_prep.build_plan import chunk_seed, shard_seed
from data_prep.file_access import atomic_write
from data_prep.pretraining_features import InstanceEncoder
from data_prep.pretraining_instances import InstanceBuilder, start_piece_flags
from data_prep.pretraining_stats import PretrainingStats
from data_prep.record_shuffle import ShuffledRecords


class ShardBuilder:
    """What a process loads once (tokenizer, start-piece and varint tables), for many shards."""

    def __init__(self, plan, tokenizer, files):
        self.plan = plan
        self.tokenizer = tokenizer
        self.files = files
        self.start_flags = start_piece_flags(tokenizer.vocab, tokenizer.is_spm)
        options = plan.options
        self.encoder = InstanceEncoder(options.max_seq_length, options.max_predictions_per_instance,
                                       tokenizer.vocab_size)

    def completed_stats(self, shard_index):
        """The recorded statistics if the shard is complete for this plan, else None."""
        files = self.files
        sidecar = self.plan.shard_sidecar(shard_index)
        if not (files.exists(self.plan.output_files[shard_index]) and files.exists(sidecar)):
            return None
        try:
            with files.open_read(sidecar) as handle:
                record = parse_json(handle.read().decode("utf-8"))
        except ValueError:
            return None
        if record.get("fingerprint") != self.plan.shard_fingerprint(shard_index):
            return None
        return PretrainingStats.from_dict(record["stats"])

    def build(self, shard_index, on_pass=None):
        """Returns (stats, skipped). `on_pass(documents, instances)` is called after each pass over
        a chunk (`dupe_factor` per chunk; its documents are counted at the first)."""
        stats = self.completed_stats(shard_index)
        if stats is not None:
            return stats, True
        plan = self.plan
        tokenizer = self.tokenizer
        stats = PretrainingStats()
        instance_builder = InstanceBuilder(plan.options, self.start_flags, tokenizer.cls_id,
                                           tokenizer.sep_id, tokenizer.mask_id, stats)
        chunks = plan.shard_chunks(shard_index)
        with ShuffledRecords(len(chunks) * plan.dupe_factor, shard_seed(plan.random_seed, shard_index)) as shuffled:
            for chunk in chunks:
                documents_before = stats.counts["documents"]
                documents = corpus.read_documents(self.files, chunk, tokenizer, stats,
                                                   plan.options.max_seq_length - 3)
                for dupe_index in range(plan.dupe_factor):
                    instances_before = stats.counts["instances"]
                    rng = random.Random(chunk_seed(plan.random_seed, chunk.index, dupe_index))
                    records = [tfrecord.frame_record(self.encoder.encode(instance))
                               for instance in instance_builder.instances(documents, rng)]
                    shuffled.add(records)
                    if on_pass is not None:
                        on_pass(stats.counts["documents"] - documents_before if dupe_index == 0 else 0,
                                stats.counts["instances"] - instances_before)
            with atomic_write(self.files, plan.output_files[shard_index]) as handle:
                shuffled.write_to(handle)
            sidecar = {"fingerprint": plan.shard_fingerprint(shard_index),
                       "output_file": plan.output_files[shard_index], "stats": stats.to_dict()}
            with atomic_write(self.files, plan.shard_sidecar(shard_index)) as sidecar_handle:
                sidecar_handle.write(json.dumps(sidecar, indent=1).encode("utf-8"))
        return stats, False


def write_summary(files, plan, stats):
    """The statistics file of the whole run (deterministic: no timings, no paths of temporaries)."""
    summary = {"settings": plan.settings(), "output_files": list(plan.output_files), **stats.summary()}
    with atomic_write(files, plan.stats_file) as handle:
        handle.write(json.dumps(summary, indent=1).encode("utf-8"))
    return summary
