"""SQuAD v1.1 / v2.0: reading, feature building, post-processing and the official metrics."""
