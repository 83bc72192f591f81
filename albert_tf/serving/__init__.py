"""SavedModel exports for TF Serving and TF-Hub-style reuse (text in, tokenized in the graph)."""
