"""Weights in other ecosystems' formats (Hugging Face, keras-hub), mapped through the original's TF1 names.

Each format declares a `NameTable` from its names to the TF1 names that
`albert_tf.checkpoint_names` maps to our variables, so every format shares that one mapping.
"""
