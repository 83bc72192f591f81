"""The pretraining-data builder as an Apache Beam pipeline, for corpora beyond one machine.

    python -m albert_cli.beam_pipeline --input_file='gs://bucket/corpus/*.txt' \\
        --output_file=gs://bucket/albert/train --num_output_shards=1000 \\
        --spm_model_file=gs://bucket/30k-clean.model --dupe_factor=40 \\
        --runner=DataflowRunner --beam_args='--project=P --region=R --temp_location=gs://bucket/tmp'

The files are byte-identical to `albert_cli.create_pretraining_data`'s for the same flags
(`data_prep.beam_pipeline`). Needs `requirements-beam.txt`.
"""

import shlex
import sys

from absl import flags

from albert_cli.cli import require, run_main
from albert_cli.create_pretraining_data import builder_settings_from_flags, define_builder_flags
from data_prep.beam_pipeline import run

FLAGS = flags.FLAGS


def main(argv):
    require(len(argv) == 1, f"unexpected arguments: {' '.join(argv[1:])}")
    beam_args = [f"--runner={FLAGS.runner}", *shlex.split(FLAGS.beam_args)]
    stats = run(beam_args, **builder_settings_from_flags())
    sys.stderr.write(f"wrote {stats['instances']} instances to {len(stats['output_files'])} file(s)\n")


if __name__ == "__main__":
    define_builder_flags()
    flags.adopt_module_key_flags(sys.modules[define_builder_flags.__module__])  # shown by --help
    flags.DEFINE_string("runner", "DirectRunner", "Beam runner: DirectRunner, DataflowRunner, "
                        "FlinkRunner, SparkRunner, ...")
    flags.DEFINE_string("beam_args", "", "Other Beam pipeline options, as one shell-quoted string.")
    run_main(main)
