"""`albert-experiments <name> [--flags]`: runs one of the paper's experiments.

    albert-experiments sharing --output_dir=output/experiments/sharing
    albert-experiments sop_vs_nsp --scale=20 --hidden_size=768 --embedding_size=128
    albert-experiments sharing --redraw=output/experiments/sharing/results.json --output_dir=/tmp/sharing

(`python -m albert_cli.experiments ...` in a checkout; a checkout also holds the recorded results of the
figures in its docs, which `--redraw` takes.)
Defaults fit a 2-core CPU (about an hour each at most); `--scale` multiplies the training steps.
"""

import importlib
import os
import sys

from absl import flags

from albert_cli.cli import UsageError, flag_text, prefer_onednn, require, require_output_dir, run_main
from albert_cli.figures import matplotlib_module
from albert_cli.output_lock import lock_output_dir
from albert_cli.tensorflow_logs import quiet_tensorflow
from albert_cli.experiments import EXPERIMENTS
from albert_tf.json_text import parse_json

prefer_onednn()  # before TensorFlow loads
quiet_tensorflow()

# Setup fields a flag can override (default None: the experiment's own default).
OVERRIDABLE = {
    "hidden_size": int, "num_hidden_layers": int, "num_attention_heads": int, "intermediate_size": int,
    "embedding_size": int, "max_seq_length": int, "max_predictions_per_seq": int, "dupe_factor": int,
    "train_batch_size": int, "train_steps": int, "learning_rate": float, "eval_batches": int,
    "finetune_steps": int, "finetune_learning_rate": float,
}

flags.DEFINE_string("output_dir", None, "Where results.json, results.md and figure.png go. Default: output/experiments/<name>.")
flags.DEFINE_string("corpus_file", None, "Raw text (a blank line between documents). Default: data/corpus/sample.txt.")
flags.DEFINE_string("glue_data_dir", None, "GLUE directory with MRPC/{train,dev}.tsv. Default: data/glue.")
flags.DEFINE_float("scale", 1.0, "Multiplies the pretraining and fine-tuning steps (for bigger machines).")
flags.DEFINE_integer("seed", 12345, "Seed of data, initialisation and data order; the same for every variant.")
flags.DEFINE_enum("kernels", "auto", ["auto", "reference", "cpu"], "Kernel set (albert_tf.kernels); auto = cpu without GPU/TPU.")
flags.DEFINE_string("init_checkpoint", None, "layer_transitions only: measure this pretraining checkpoint instead of training two models.")
flags.DEFINE_string("albert_config_file", None, "layer_transitions only: the config of --init_checkpoint.")
flags.DEFINE_string("redraw", None, "sharing, embedding_size, sop_vs_nsp: no training; draw figure.png into "
                    "--output_dir from this results.json, or from a JSON list of several seeds' results (the first "
                    "with error bars), such as the recorded <name>.json of a checkout's paper_experiments docs.")
flags.DEFINE_list("speed_models", None, "size_and_speed only: the models to time (default: all but "
                  "bert_xlarge and albert_xxlarge, which need more memory than a small machine has).")
for _name, _type in OVERRIDABLE.items():
    (flags.DEFINE_integer if _type is int else flags.DEFINE_float)(_name, None, f"Override the experiment's {_name}.")

FLAGS = flags.FLAGS
NOT_REDRAWN = ("layer_transitions", "size_and_speed")  # their figures are not redrawn from results yet


def make_setup(name, module):
    from albert_cli.experiments.setup import Setup  # pylint: disable=g-import-not-at-top

    values = dict(module.DEFAULTS)
    values.update({key: FLAGS[key].value for key in OVERRIDABLE if FLAGS[key].value is not None})
    values["output_dir"] = FLAGS.output_dir or os.path.join("output", "experiments", name)
    for key in ("corpus_file", "glue_data_dir"):
        if FLAGS[key].value:
            values[key] = FLAGS[key].value
    values.update(seed=FLAGS.seed, kernels=FLAGS.kernels)
    try:
        setup = Setup(**values).scaled(FLAGS.scale)
        setup.check()
    except (ValueError, FileNotFoundError) as error:
        raise UsageError(flag_text(error)) from None
    return setup


def run_kwargs(name):
    if name == "layer_transitions" and FLAGS.init_checkpoint:
        from albert_tf.config import AlbertConfig  # pylint: disable=g-import-not-at-top

        require(FLAGS.albert_config_file, "--init_checkpoint needs --albert_config_file (its model's config JSON)")
        try:
            config = AlbertConfig.from_json_file(FLAGS.albert_config_file)
        except ValueError as error:
            raise UsageError(f"--albert_config_file: {error}") from None
        return {"checkpoint": FLAGS.init_checkpoint, "checkpoint_config": config}
    require(not FLAGS.init_checkpoint, "--init_checkpoint applies to layer_transitions only")
    if FLAGS.speed_models is not None:
        require(name == "size_and_speed", "--speed_models applies to size_and_speed only")
        return {"timed": tuple(FLAGS.speed_models)}
    return {}


def redraw(name, module, path):
    """figure.png of `path`'s recorded results, drawn by the code a run draws with."""
    from albert_cli.experiments import report  # pylint: disable=g-import-not-at-top
    from albert_cli.experiments.setup import FIGURE_PNG  # pylint: disable=g-import-not-at-top

    require(hasattr(module, "draw"), f"--redraw applies to the experiments that draw from their results: "
                                     f"{', '.join(n for n in EXPERIMENTS if n not in NOT_REDRAWN)}")
    try:
        with open(path, "rb") as handle:
            runs = parse_json(handle.read())
    except (OSError, ValueError) as error:
        raise UsageError(f"--redraw {path}: cannot read it as JSON ({getattr(error, 'strerror', None) or error})") from None
    runs = [runs] if isinstance(runs, dict) else runs
    require(isinstance(runs, list) and runs and all(isinstance(run, dict) for run in runs),
            f"--redraw {path}: expected a {name} results.json object or a list of them")
    try:
        figure = module.draw(runs)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as error:
        raise UsageError(f"--redraw {path}: not {name} results (missing or malformed field {error})") from None
    output_dir = FLAGS.output_dir or os.path.join("output", "experiments", name)
    require_output_dir("output_dir", output_dir)  # after the drawing: a bad file leaves no directory behind
    figure_path = os.path.join(output_dir, FIGURE_PNG)
    report.save_figure(figure, figure_path)
    print(f"wrote {figure_path}")


def main(argv):
    require(len(argv) == 2 and argv[1] in EXPERIMENTS,
            f"usage: albert-experiments <name> [--flags]; <name> is one of {', '.join(EXPERIMENTS)}")
    name = argv[1]
    matplotlib_module()  # its figure is drawn last: say it is missing before the run, not after
    module = importlib.import_module(f"albert_cli.experiments.{name}")
    if FLAGS.redraw is not None:
        return redraw(name, module, FLAGS.redraw)
    setup = make_setup(name, module)
    kwargs = run_kwargs(name)
    require_output_dir("output_dir", setup.output_dir)
    lock_output_dir("output_dir", setup.output_dir)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    try:
        module.run(setup, log=log, **kwargs)
    except (ValueError, FileNotFoundError) as error:
        raise UsageError(flag_text(error)) from None
    print(f"wrote {setup.output_dir}/results.json, results.md, figure.png")


def console_main():
    """The `albert-experiments` command (`python -m albert_cli.experiments`)."""
    run_main(main, help_module=__name__)


if __name__ == "__main__":
    console_main()
