"""The rows a GLUE reader yields: `GlueExample` and `ExampleSet`."""

import collections

GlueExample = collections.namedtuple("GlueExample", ["guid", "text_a", "text_b", "label"])
GlueExample.__doc__ = """One GLUE row: `label` is a label name, a float (STS-B) or None (test split)."""

ExampleSet = collections.namedtuple("ExampleSet", ["examples", "source", "num_skipped"])
ExampleSet.__doc__ = """A split's examples, where they came from (for messages and cache keys), rows skipped."""
