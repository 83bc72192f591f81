"""Small command-line tools for looking at runs (python -m albert_tf.tools.<name>)."""
