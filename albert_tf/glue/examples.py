"""The one entry point that reads a split from a GLUE directory or from TFDS, into `GlueExample`s."""

from albert_tf.glue.example_types import ExampleSet, GlueExample  # noqa: F401 (re-exported)


def read_examples(task, split, data_dir=None, tfds_data_dir=None):
    """Reads `split` of `task` from `<data_dir>/<TASK>/*.tsv`, or from TFDS when `tfds_data_dir` is set."""
    if tfds_data_dir:
        from albert_tf.glue.tfds_reader import read_tfds_split  # pylint: disable=g-import-not-at-top

        return read_tfds_split(task, split, tfds_data_dir)
    from albert_tf.glue.tsv_reader import read_tsv_split  # pylint: disable=g-import-not-at-top

    return read_tsv_split(task, split, data_dir)
