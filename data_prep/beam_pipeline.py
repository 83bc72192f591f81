"""The pretraining-data builder as an Apache Beam pipeline, for corpora beyond one machine.

Each output shard is one element, built by the same `ShardBuilder` as the local runner, so the
files are byte-identical to `create_pretraining_data`'s for the same flags (tested with the
DirectRunner). Parallelism is the number of output shards. Needs `requirements-beam.txt`.
The command is `python -m albert_cli.beam_pipeline`.
"""

import contextlib
import logging
import os
import runpy


def _not_the_bigquery_notice(record):
    """Beam warns as it loads, through the root logger, "apitools not found, and bigquery client
    libraries are not available": true, and nothing to a builder that only reads and writes files."""
    return "apitools not found" not in record.getMessage()


logging.getLogger().addFilter(_not_the_bigquery_notice)
import apache_beam as beam  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order
from apache_beam.io.filesystem import BeamIOError, CompressionTypes  # noqa: E402  pylint: disable=wrong-import-position
from apache_beam.io.filesystems import FileSystems  # noqa: E402  pylint: disable=wrong-import-position
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402  pylint: disable=wrong-import-position

logging.getLogger().removeFilter(_not_the_bigquery_notice)

from albert_tf.json_text import parse_json
from data_prep.build_plan import make_plan
from data_prep.file_access import stale_temporaries
from data_prep.pretraining_stats import PretrainingStats
from data_prep.shard_builder import ShardBuilder, write_summary


class BeamFiles:
    """The builder's file operations on Beam's filesystems (local paths, gs://, s3://, hdfs://)."""

    def glob(self, pattern):
        try:
            (result,) = FileSystems.match([pattern])
        except BeamIOError:
            return []
        return sorted(m.path for m in result.metadata_list if not self.is_dir(m.path))

    def size(self, path):
        (result,) = FileSystems.match([path])
        return result.metadata_list[0].size_in_bytes

    def open_read(self, path):
        return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)

    def open_write(self, path):
        return FileSystems.create(path, compression_type=CompressionTypes.UNCOMPRESSED)

    def exists(self, path):
        return FileSystems.exists(path)

    def is_dir(self, path):
        return "://" not in path and os.path.isdir(path)  # object stores have no directories

    def rename(self, source, destination):
        FileSystems.rename([source], [destination])

    def delete(self, path):
        with contextlib.suppress(BeamIOError):
            FileSystems.delete([path])

    def makedirs(self, directory):
        with contextlib.suppress(IOError, BeamIOError):  # already there, or an object store
            FileSystems.mkdirs(directory)


class _BuildShard(beam.DoFn):
    """Loads the tokenizer once per worker; builds (or skips) one shard per element."""

    def __init__(self, plan):
        self._plan = plan
        self._builder = None

    def setup(self):
        self._builder = ShardBuilder(self._plan, self._plan.tokenizer.load(), BeamFiles())

    def process(self, shard_index):
        stats, _ = self._builder.build(shard_index)
        yield stats.to_dict()


def _summarise(shard_stats, plan):
    total = PretrainingStats()
    for stats in shard_stats:
        total.merge(PretrainingStats.from_dict(stats))
    write_summary(BeamFiles(), plan, total)


def run(beam_args=(), **settings):
    """Runs the build on Beam; `settings` are `data_prep.create_pretraining_data.build`'s.

    `beam_args` are Beam pipeline options, e.g. ["--runner=DirectRunner"]. Returns the
    statistics summary. Raises ValueError or FileNotFoundError for bad settings or input.
    """
    files = BeamFiles()
    plan, _ = make_plan(files, **settings)
    for path in plan.output_files:
        for stale in stale_temporaries(files, path):
            files.delete(stale)
    with beam.Pipeline(options=PipelineOptions(list(beam_args))) as pipeline:
        _ = (pipeline
             | "Shards" >> beam.Create(list(range(plan.num_shards)))
             | "Spread" >> beam.Reshuffle()
             | "Build" >> beam.ParDo(_BuildShard(plan))
             | "Collect" >> beam.combiners.ToList()
             | "Summarise" >> beam.Map(_summarise, plan))
    with files.open_read(plan.stats_file) as handle:
        return parse_json(handle.read().decode("utf-8"))


if __name__ == "__main__":
    # The command (its flags and main) is albert_cli's; run by name, so the library imports none of it.
    runpy.run_module("albert_cli.beam_pipeline", run_name="__main__", alter_sys=True)
