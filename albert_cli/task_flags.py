"""The flags every fine-tuning runner (GLUE, SQuAD, RACE) shares, defined once (the original's names),
without TensorFlow."""

from absl import flags

from albert_cli.bundled import SPM_MODEL, TINY_CONFIG
from albert_tf.choices import OPTIMIZER_NAMES, PRECISION_POLICIES, STRATEGY_NAMES
from albert_tf.kernels import KERNELS_FLAG_VALUES

MAX_SEED = 2**32 - 1  # what NumPy's and Keras' seeding take


def define_extend_positions():
    """--extend_positions, for every command with --init_checkpoint; alone it would be accepted and do
    nothing, so it is refused without --init_checkpoint as the flags are parsed."""
    flags.DEFINE_enum("extend_positions", None, ["repeat"], "Where --init_checkpoint has fewer position embeddings than the config's max_position_embeddings: repeat = fill the extra rows by repeating the learned ones (as Longformer and BigBird did; said in the load report). Unset: a shape error.")
    flags.register_multi_flags_validator(
        ["extend_positions", "init_checkpoint"],
        lambda values: not values["extend_positions"] or values["init_checkpoint"],
        message="--extend_positions extends the position table of --init_checkpoint: give --init_checkpoint too")


def refuse_empty(*names):
    """`--name=` (an empty path) is refused as the flags are parsed, naming the flag, rather than taken
    for the flag not given ("nothing to do"). Call before the command's own flag validators."""
    for name in names:
        flags.register_validator(name, lambda value: value is None or value.strip(),
                                 message=f"--{name} is empty; give a directory")


def define_task_flags(output_dir):
    """Model, checkpoint, output and hardware flags; `output_dir` is the runner's default."""
    flags.DEFINE_string("spm_model_file", SPM_MODEL, "SentencePiece model (default: the official 30k-clean.model).")
    flags.DEFINE_string("albert_config_file", TINY_CONFIG, "albert_config.json of the model (default: the config of a "
                        "Hugging Face / keras-hub --init_checkpoint, else the bundled tiny one).")
    flags.DEFINE_string("init_checkpoint", None,
                        "Original TF1 checkpoint, or a TF2 one from run_pretraining.py or a fine-tuning script; also a "
                        "Hugging Face / keras-hub directory. The backbone is always loaded from it; the task head too "
                        "when the checkpoint holds one of the same kind and shapes (fine-tuned on this task), else "
                        "the head starts fresh.")
    define_extend_positions()
    flags.DEFINE_string("output_dir", output_dir, "Checkpoints, predictions and metrics go here.")
    flags.DEFINE_string("cached_dir", None, "Where feature TFRecords are cached (default <output_dir>/features).")
    flags.DEFINE_bool("do_lower_case", True, "Lowercase the text (the English models are uncased).")
    flags.DEFINE_integer("keep_checkpoint_max", 5, "Training checkpoints kept (the best one is kept apart).",
                         lower_bound=1)
    flags.DEFINE_enum("optimizer", "adamw", OPTIMIZER_NAMES, "Optimizer, as the original's.")
    flags.DEFINE_integer("seed", 12345, "Random seed (with --seeds: the first).", lower_bound=0, upper_bound=MAX_SEED)
    flags.DEFINE_enum("strategy", None, STRATEGY_NAMES, "tf.distribute strategy (default: from the hardware).")
    flags.DEFINE_string("tpu_name", None, "Cloud TPU name or grpc:// address (--strategy=tpu).")
    flags.DEFINE_enum("mixed_precision", "float32", PRECISION_POLICIES,
                      "Compute dtype policy; mixed_float16 adds dynamic loss scaling.")
    flags.DEFINE_bool("jit_compile", False, "Compile the training step with XLA.")
    flags.DEFINE_enum("kernels", "auto", KERNELS_FLAG_VALUES, "Kernel set of the model (albert_tf.kernels): "
                      "auto = cpu when no GPU/TPU is visible and not --deterministic, else reference.")
    flags.DEFINE_bool("deterministic", False, "Bit-identical runs: a rerun, or a killed run resumed, ends with "
                      "the same weights (op determinism, one inter-op thread, the reference kernels; slower).")
