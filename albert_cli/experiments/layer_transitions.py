"""Paper Figure 1: how much each layer changes its input, for an all-shared and a not-shared model.

For every block: the L2 distance and the cosine similarity between its input and its output
hidden state, averaged over the real tokens of held-out sequences. The paper (ALBERT-large vs
BERT-large): ALBERT's transitions are much smoother from layer to layer, and do not converge to
zero. By default both models are pretrained here with one budget; `checkpoint=` measures any
pretraining checkpoint instead (a released TF1 one or run_pretraining.py output).
"""

import numpy as np
import tensorflow as tf

from albert_cli.experiments import report
from albert_cli.experiments.data import pretraining_files
from albert_cli.experiments.parameters import backbone_parameters
from albert_cli.experiments.pretrain import kernels_for, pretrain
from albert_cli.figures import matplotlib_module
from albert_tf import checkpoints
from albert_tf.models import AlbertPretrainingModel
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.pretraining.data import pretraining_dataset

TITLE = "Layer transitions (paper Figure 1)"
DEFAULTS = {"num_hidden_layers": 12, "eval_batches": 10}
VARIANTS = {"all-shared": "all", "not-shared": "none"}


def transitions(backbone, dataset, max_batches):
    """{"l2_distance": [...], "cosine_similarity": [...]}, one value per block, token-averaged."""
    sums = None
    tokens = 0.0
    for batch in dataset.take(max_batches):
        inputs = {name: batch[name] for name in INPUT_NAMES}
        outputs = backbone(inputs, training=False)["encoder_outputs"]
        states = [backbone.embeddings(inputs["input_word_ids"], inputs["input_type_ids"], training=False)]
        states = [tf.cast(state, tf.float32) for state in states + list(outputs)]
        mask = tf.cast(inputs["input_mask"], tf.float32)
        per_block = []
        for before, after in zip(states[:-1], states[1:]):
            distance = tf.norm(after - before, axis=-1)
            cosine = tf.reduce_sum(before * after, -1) / (tf.norm(before, axis=-1) * tf.norm(after, axis=-1))
            per_block.append([tf.reduce_sum(distance * mask), tf.reduce_sum(cosine * mask)])
        batch_sums = np.array(per_block, np.float64)
        sums = batch_sums if sums is None else sums + batch_sums
        tokens += float(tf.reduce_sum(mask))
    if sums is None:
        raise ValueError("layer transitions: the held-out data gave no batch")
    means = sums / tokens
    return {"l2_distance": means[:, 0].tolist(), "cosine_similarity": means[:, 1].tolist()}


def checkpoint_model(checkpoint, config, setup):
    """An `AlbertPretrainingModel` of `config` loaded strictly from `checkpoint`."""
    model = AlbertPretrainingModel(config, kernels=kernels_for(setup))
    checkpoints.load(model, checkpoint, strict=True)
    return model


def run(setup, checkpoint=None, checkpoint_config=None, log=print):
    """Measures the two pretrained variants (or the one `checkpoint`); writes the outputs."""
    train_file, heldout_file = pretraining_files(setup)
    if checkpoint:
        models = {"checkpoint": checkpoint_model(checkpoint, checkpoint_config, setup)}
    else:
        models = {}
        for name, sharing in VARIANTS.items():
            log(f"{name}: pretraining {setup.train_steps} steps")
            models[name] = pretrain(setup.base_config(sharing=sharing), train_file, setup, log=log).model
    dataset = pretraining_dataset(heldout_file, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=False)
    variants = {}
    for name, model in models.items():
        measured = transitions(model.albert, dataset, setup.eval_batches)
        distances = np.array(measured["l2_distance"])
        variants[name] = dict(
            measured, parameters=backbone_parameters(model.albert.config),
            sharing=model.albert.config.sharing,
            # How jumpy the curve is: mean absolute change of the L2 distance from one block to the next.
            l2_roughness=float(np.abs(np.diff(distances)).mean()) if len(distances) > 1 else 0.0,
        )
    results = {"experiment": "layer_transitions", "setup": vars(setup), "checkpoint": checkpoint, "variants": variants}
    return write(setup, results)


def write(setup, results):
    variants = results["variants"]
    columns = [("layer", "layer")]
    for name in variants:
        columns += [(f"{name}_l2", f"{name} L2"), (f"{name}_cos", f"{name} cosine")]
    num_blocks = len(next(iter(variants.values()))["l2_distance"])
    rows = []
    for block in range(num_blocks):
        row = {"layer": block + 1}
        for name, values in variants.items():
            row[f"{name}_l2"] = values["l2_distance"][block]
            row[f"{name}_cos"] = values["cosine_similarity"][block]
        rows.append(row)
    figure, (l2_axes, cos_axes) = report.new_figure(2)
    for name, values in variants.items():
        layers = range(1, len(values["l2_distance"]) + 1)
        l2_axes.plot(layers, values["l2_distance"], marker="o", label=name)
        cos_axes.plot(layers, values["cosine_similarity"], marker="o", label=name)
    l2_axes.set(xlabel="layer", ylabel="L2 distance (input, output)", title="L2 distance")
    cos_axes.set(xlabel="layer", ylabel="cosine similarity", title="cosine similarity")
    l2_axes.legend()
    for axes in (l2_axes, cos_axes):
        axes.xaxis.set_major_locator(matplotlib_module("matplotlib.ticker").MaxNLocator(integer=True))
    notes = "".join(f"- {name}: {values['parameters']:,} parameters, L2 roughness "
                    f"{values['l2_roughness']:.4f}\n" for name, values in variants.items())
    report.write_outputs(setup.output_dir, TITLE, results, report.markdown_table(columns, rows), figure, notes)
    return results
