"""Paper Tables 1-2: parameters of BERT and ALBERT at each size, and their training throughput.

Parameters come from the configs (`parameters.backbone_parameters`). Throughput is measured here
with one code for all models: the library's pretraining step on a fixed random batch of
`train_batch_size` x `max_seq_length` (much smaller than the paper's 4096 x 512; stated in the
results), timed over `train_steps` steps after one untimed step (tracing). The paper reports the
speed relative to BERT-large (`paper.SPEEDUP`).
"""

import gc
import time

import keras
import tensorflow as tf

from albert_tf.training.distribute import get_strategy
from albert_cli.experiments import paper, report
from albert_cli.experiments.parameters import PAPER_MODELS, backbone_parameters, paper_config
from albert_cli.experiments.pretrain import kernels_for
from albert_tf.pretraining.trainer import PretrainingTrainer, TrainerSettings

TITLE = "Model size and training speed (paper Tables 1-2)"
DEFAULTS = {"train_batch_size": 4, "max_seq_length": 64, "max_predictions_per_seq": 10, "train_steps": 3}
# Counted, but timed only when named in --speed_models: BERT-xlarge (1.28B parameters: its weights,
# gradients and LAMB's two slots alone are 20 GB) and ALBERT-xxlarge (killed for memory at 17.8 GB
# resident on a 23 GB machine, after the other models in the same process).
TOO_BIG_FOR_A_SMALL_MACHINE = ("bert_xlarge", "albert_xxlarge")
DEFAULT_TIMED = tuple(name for name in PAPER_MODELS if name not in TOO_BIG_FOR_A_SMALL_MACHINE)
REFERENCE_MODEL = "bert_large"


def random_batch(config, setup):
    """One fixed pretraining batch of random tokens (the speed does not depend on the values)."""
    batch, length, predictions = setup.train_batch_size, setup.max_seq_length, setup.max_predictions_per_seq
    generator = tf.random.Generator.from_seed(setup.seed)
    return {
        "input_word_ids": generator.uniform([batch, length], 5, config.vocab_size, tf.int32),
        "input_mask": tf.ones([batch, length], tf.int32),
        "input_type_ids": tf.concat([tf.zeros([batch, length // 2], tf.int32),
                                     tf.ones([batch, length - length // 2], tf.int32)], axis=1),
        "masked_lm_positions": generator.uniform([batch, predictions], 1, length, tf.int32),
        "masked_lm_ids": generator.uniform([batch, predictions], 5, config.vocab_size, tf.int32),
        "masked_lm_weights": tf.ones([batch, predictions], tf.float32),
        "next_sentence_labels": generator.uniform([batch], 0, 2, tf.int32),
    }


def training_throughput(config, setup):
    """Examples per second and per CPU-second of the library's training step for `config` (after
    one untimed step). The CPU time of the process counts the work, not the waits for a core, so
    it compares models timed at different moments of a shared machine better than the wall clock."""
    keras.utils.set_random_seed(setup.seed)
    settings = TrainerSettings(train_batch_size=setup.train_batch_size, num_train_steps=setup.train_steps + 1,
                               optimizer="lamb", learning_rate=1e-4, kernels=kernels_for(setup))
    trainer = PretrainingTrainer(get_strategy("one_device"), config, settings)
    iterator = iter(tf.data.Dataset.from_tensors(random_batch(config, setup)).repeat())
    trainer.train_loop(iterator, 1)
    started, cpu_started = time.monotonic(), time.process_time()
    trainer.train_loop(iterator, setup.train_steps)
    float(trainer.train_metrics.result()["loss"])  # waits for the steps to finish
    examples = setup.train_steps * setup.train_batch_size
    rates = {"examples_per_second": examples / (time.monotonic() - started),
             "examples_per_cpu_second": examples / (time.process_time() - cpu_started)}
    # Free this model before the next one: the largest need several GB each.
    del trainer, iterator
    keras.backend.clear_session()
    gc.collect()
    return rates


def run(setup, configs=None, timed=DEFAULT_TIMED, log=print):
    """Counts every model of `configs` ({name: AlbertConfig}, default: the paper's seven) and times
    those named in `timed`; speedups are relative to `bert_large` when it is timed."""
    configs = configs or {name: paper_config(name) for name in PAPER_MODELS}
    unknown = sorted(set(timed) - set(configs))
    if unknown:
        raise ValueError(f"--speed_models: unknown model(s) {unknown}; known: {sorted(configs)}")
    rows = []
    for name, config in configs.items():
        row = {"model": name, "parameters": backbone_parameters(config), "hidden_size": config.hidden_size,
               "num_hidden_layers": config.num_hidden_layers, "embedding_size": config.embedding_size,
               "sharing": config.sharing}
        if name in paper.PARAMETERS:
            row.update(paper_parameters=paper.shown(paper.PARAMETERS[name]),
                       paper_speedup=paper.shown(paper.SPEEDUP[name]))
        if name in timed:
            log(f"{name}: timing {setup.train_steps} training steps")
            row.update(training_throughput(config, setup))
            log(f"{name}: {row['examples_per_second']:.3f} examples/s, {row['examples_per_cpu_second']:.3f} per CPU-s")
        rows.append(row)
    reference = next((row for row in rows if row["model"] == REFERENCE_MODEL and "examples_per_second" in row), None)
    for row in rows:
        if reference and "examples_per_second" in row:
            row["speedup"] = row["examples_per_second"] / reference["examples_per_second"]
            row["cpu_speedup"] = row["examples_per_cpu_second"] / reference["examples_per_cpu_second"]
    results = {"experiment": "size_and_speed", "setup": vars(setup), "reference_model": REFERENCE_MODEL,
               "device": ", ".join(device.name for device in tf.config.list_logical_devices()), "models": rows}
    return write(setup, results)


def write(setup, results):
    rows = results["models"]
    columns = [("model", "model"), ("parameters", "parameters"), ("paper_parameters", "paper parameters"),
               ("examples_per_second", "examples/s"), ("speedup", f"speedup vs {REFERENCE_MODEL}"),
               ("examples_per_cpu_second", "examples/CPU-s"), ("cpu_speedup", "speedup in CPU time"),
               ("paper_speedup", "paper speedup")]
    figure, (size_axes, speed_axes) = report.new_figure(2)
    names = [row["model"] for row in rows]
    size_axes.bar(names, [row["parameters"] / 1e6 for row in rows])
    size_axes.set(ylabel="parameters (millions)", yscale="log", title="size")
    timed = [row for row in rows if row.get("cpu_speedup")]
    speed_axes.bar([row["model"] for row in timed], [row["cpu_speedup"] for row in timed])
    speed_axes.set(ylabel=f"examples per CPU-second relative to {REFERENCE_MODEL}", title="training speed")
    for axes in (size_axes, speed_axes):
        axes.tick_params(axis="x", labelrotation=60)
    notes = (f"Throughput: batch {setup.train_batch_size} x {setup.max_seq_length} tokens, "
             f"{setup.train_steps} timed steps, on {results['device']}.\n")
    report.write_outputs(setup.output_dir, TITLE, results, report.markdown_table(columns, rows), figure, notes)
    return results
