"""`GlueExample` and the one entry point that reads a split from a GLUE directory or from TFDS."""

import collections

GlueExample = collections.namedtuple("GlueExample", ["guid", "text_a", "text_b", "label"])
GlueExample.__doc__ = """One GLUE row: `label` is a label name, a float (STS-B) or None (test split)."""

ExampleSet = collections.namedtuple("ExampleSet", ["examples", "source", "num_skipped"])
ExampleSet.__doc__ = """A split's examples, where they came from (for messages and cache keys), rows skipped."""


def read_examples(task, split, data_dir=None, tfds_data_dir=None):
    """Reads `split` of `task` from `<data_dir>/<TASK>/*.tsv`, or from TFDS when `tfds_data_dir` is set."""
    if tfds_data_dir:
        from albert_tf.glue.tfds_reader import read_tfds_split  # pylint: disable=g-import-not-at-top

        return read_tfds_split(task, split, tfds_data_dir)
    from albert_tf.glue.tsv_reader import read_tsv_split  # pylint: disable=g-import-not-at-top

    return read_tsv_split(task, split, data_dir)
