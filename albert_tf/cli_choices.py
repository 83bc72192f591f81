"""Flag choices and defaults that `--help` shows, in a module free of TensorFlow.

The commands define their flags before anything heavy is imported, so that `--help` answers at
once; the modules that use these values import them from here.
"""

STRATEGY_NAMES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
OPTIMIZER_NAMES = ("lamb", "adamw")
# The original's SQuAD 2.0 beam (run_squad_v2.py flags).
START_N_TOP = 5
END_N_TOP = 5
