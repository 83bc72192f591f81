"""The paper's controlled comparisons, one command each: `python -m albert_cli.experiments <name>`.

Each experiment builds its data from a corpus text file, trains its variants with one budget and
seed, evaluates on held-out data, and writes results.json, results.md and figure.png. See
docs/paper_experiments.md.
"""

EXPERIMENTS = ("layer_transitions", "size_and_speed", "sharing", "embedding_size", "sop_vs_nsp")
