"""Raw text -> ALBERT pretraining TFRecords (n-gram whole-word MLM + sentence-order pairs).

Same settings, defaults, algorithm and TFRecord schema as google-research/albert's script, but
streaming (memory bounded by `input_chunk_bytes`, not by the corpus), parallel (`num_workers`),
reproducible (every random choice flows from `random_seed`) and resumable (complete shards are
skipped on a rerun). `build(input_file=..., output_file=..., spm_model_file=..., ...)` takes the
command's flags as keywords; the command is `albert-create-pretraining-data`
(`python -m albert_cli.create_pretraining_data`). The same build runs on Apache Beam:
`data_prep.beam_pipeline`.
"""

import multiprocessing
import os
import queue
import runpy
import time

from absl import logging

from albert_tf.progress import Progress
from data_prep.build_plan import make_plan
from data_prep.file_access import LocalFiles, stale_temporaries
from data_prep.pretraining_stats import PretrainingStats
from data_prep.shard_builder import ShardBuilder, write_summary


def build(num_workers=0, show_progress=True, **settings):
    """Builds the TFRecords and the statistics file; `settings` are the flags as keywords.

    `num_workers` processes (0: one per CPU) build shards in parallel; the bytes written do not
    depend on it. Returns {"stats", "stats_file", "built_shards", "skipped_shards",
    "elapsed_seconds"}.
    Raises ValueError or FileNotFoundError for bad settings or input (naming the flag).
    """
    if num_workers < 0:
        raise ValueError(f"--num_workers must be >= 0, got {num_workers}")
    start = time.monotonic()
    files = LocalFiles()
    plan, tokenizer = make_plan(files, **settings)
    local_builder = ShardBuilder(plan, tokenizer, files)
    total = PretrainingStats()
    skipped = []
    pending = []
    for shard_index in range(plan.num_shards):
        recorded = local_builder.completed_stats(shard_index)
        if recorded is None:
            pending.append(shard_index)
        else:
            skipped.append(shard_index)
            total.merge(recorded)
    for shard_index in pending:
        for stale in stale_temporaries(files, plan.output_files[shard_index]):
            files.delete(stale)

    progress = _PassProgress(sum(len(plan.shard_chunks(i)) for i in pending) * plan.dupe_factor, show_progress)
    num_workers = min(num_workers or os.cpu_count() or 1, len(pending))
    if num_workers <= 1:
        for shard_index in pending:
            total.merge(local_builder.build(shard_index, on_pass=progress.pass_done)[0])
    else:
        for shard_stats in _build_in_pool(plan, pending, num_workers, progress):
            total.merge(shard_stats)
    summary = write_summary(files, plan, total)
    progress.close()
    _warn_if_binary(summary)
    _warn_about_long_lines(summary, plan.options.max_seq_length)
    return {"stats": summary, "stats_file": plan.stats_file, "built_shards": pending,
            "skipped_shards": skipped, "elapsed_seconds": time.monotonic() - start}


# Above this share of non-UTF-8 lines the input is more likely binary data than text.
BINARY_WARNING_FRACTION = 0.1


def _warn_if_binary(summary):
    lines, bad = summary["lines"], summary["non_utf8_lines"]
    if lines and bad > BINARY_WARNING_FRACTION * lines:
        logging.warning("--input_file: %d of %d lines are not UTF-8: is the input binary rather "
                        "than text? (see non_utf8_lines in the statistics file)", bad, lines)


# Above this share of lines longer than a sequence holds, the input looks like paragraphs per line
# (at 64 tokens: 8.6% of the lines of the bundled pretraining_sample.txt, a sentence per line; 33% of
# sample.txt, the same books with a paragraph per line).
LONG_LINE_WARNING_FRACTION = 0.25


def _warn_about_long_lines(summary, max_seq_length):
    """Paragraph-per-line input builds without error but loses text: each long line is cut to one segment."""
    lines, long_lines = summary["lines"], summary["long_lines"]
    if lines and long_lines > LONG_LINE_WARNING_FRACTION * lines:
        example = summary["long_line_example"]
        logging.warning("--input_file: %d of %d lines have more than %d tokens (--max_seq_length=%d less 3), "
                        "each cut to one truncated segment: is it a paragraph per line? The input wants one "
                        "sentence per line "
                        "(python -m albert_cli.split_corpus splits paragraphs). First: %s at byte %d: %r...",
                        long_lines, lines, max_seq_length - 3, max_seq_length,
                        example["file"], example["byte"], example["text"][:60])


class _PassProgress:
    """Passes over a chunk done (--dupe_factor per chunk; with ETA), plus documents and instances per second."""

    def __init__(self, num_passes, enabled):
        self._progress = Progress("create_pretraining_data", total=num_passes, unit="passes") if enabled else None
        self.documents = 0
        self.instances = 0

    def pass_done(self, documents, instances):
        self.documents += documents
        self.instances += instances
        if self._progress is not None:
            self._progress.update(1, extra=self._extra())

    def _extra(self):
        elapsed = max(time.monotonic() - self._progress.start, 1e-9)
        return (f"documents={self.documents}, instances={self.instances} "
                f"({self.instances / elapsed:.0f} instances/s)")

    def close(self):
        if self._progress is not None:
            self._progress.close(extra=self._extra())


def _build_in_pool(plan, shard_indices, num_workers, progress):
    """Yields each shard's stats; worker errors (e.g. ValueError) are re-raised here."""
    context = multiprocessing.get_context("spawn")  # no fork of a possibly multi-threaded parent
    messages = context.Queue()
    with context.Pool(num_workers, initializer=_start_worker, initargs=(plan, messages)) as pool:
        results = [pool.apply_async(_build_shard_in_worker, (index,)) for index in shard_indices]
        while not all(result.ready() for result in results):
            try:
                progress.pass_done(*messages.get(timeout=0.2))
            except queue.Empty:
                pass
        try:
            while True:
                progress.pass_done(*messages.get(timeout=0.1))
        except queue.Empty:
            pass
        for result in results:
            yield PretrainingStats.from_dict(result.get())


_worker = {}


def _start_worker(plan, messages):
    _worker["builder"] = ShardBuilder(plan, plan.tokenizer.load(), LocalFiles())
    _worker["messages"] = messages


def _build_shard_in_worker(shard_index):
    stats, _ = _worker["builder"].build(
        shard_index, on_pass=lambda documents, instances: _worker["messages"].put((documents, instances)))
    return stats.to_dict()


if __name__ == "__main__":
    # The command (its flags and main) is albert_cli's; run by name, so the library imports none of it.
    runpy.run_module("albert_cli.create_pretraining_data", run_name="__main__", alter_sys=True)
