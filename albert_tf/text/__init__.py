"""Text to ids: the Python tokenizer (`tokenization`, no TensorFlow) and its in-graph twin (`preprocessing`)."""
