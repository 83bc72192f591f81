"""layer_transitions end to end at a tiny scale, its measure against NumPy, and on a checkpoint."""

import os

import numpy as np
import tensorflow as tf

from albert_cli.experiments import layer_transitions
from albert_cli.experiments.data import pretraining_files
from albert_tf.models import AlbertPretrainingModel
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.pretraining.data import pretraining_dataset
from tests.experiments_test_data import png_size, tiny_setup


def test_layer_transitions_end_to_end(tmp_path):
    setup = tiny_setup(tmp_path, num_hidden_layers=3)
    results = layer_transitions.run(setup, log=lambda message: None)
    variants = results["variants"]
    assert set(variants) == {"all-shared", "not-shared"}
    for values in variants.values():
        assert len(values["l2_distance"]) == len(values["cosine_similarity"]) == 3
        assert all(distance > 0 for distance in values["l2_distance"])
        assert all(-1.0 <= cosine <= 1.0 for cosine in values["cosine_similarity"])
    assert variants["all-shared"]["parameters"] < variants["not-shared"]["parameters"]
    assert variants["all-shared"]["l2_distance"] != variants["not-shared"]["l2_distance"]
    assert png_size(os.path.join(setup.output_dir, "figure.png"))[0] > 100


def _numpy_transitions(backbone, batch):
    inputs = {name: batch[name] for name in INPUT_NAMES}
    states = [backbone.embeddings(inputs["input_word_ids"], inputs["input_type_ids"]).numpy()]
    states += [state.numpy() for state in backbone(inputs)["encoder_outputs"]]
    mask = batch["input_mask"].numpy().astype(bool)
    l2, cosine = [], []
    for before, after in zip(states[:-1], states[1:]):
        before, after = before[mask], after[mask]  # [tokens, H]
        l2.append(np.linalg.norm(after - before, axis=-1).mean())
        cosine.append(((before * after).sum(-1) / np.linalg.norm(before, axis=-1) / np.linalg.norm(after, axis=-1)).mean())
    return l2, cosine


def test_transitions_match_numpy_and_a_saved_checkpoint(tmp_path):
    setup = tiny_setup(tmp_path, num_hidden_layers=3, eval_batches=1)
    _, heldout = pretraining_files(setup)
    dataset = pretraining_dataset(heldout, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=False)
    tf.keras.utils.set_random_seed(1)
    model = AlbertPretrainingModel(setup.base_config(sharing="none"))
    measured = layer_transitions.transitions(model.albert, dataset, 1)
    l2, cosine = _numpy_transitions(model.albert, next(iter(dataset)))
    np.testing.assert_allclose(measured["l2_distance"], l2, rtol=1e-4)
    np.testing.assert_allclose(measured["cosine_similarity"], cosine, rtol=1e-4)

    prefix = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt" / "ckpt-1"))  # as pretraining writes it
    results = layer_transitions.run(setup, checkpoint=prefix, checkpoint_config=model.albert.config,
                                    log=lambda message: None)
    np.testing.assert_allclose(results["variants"]["checkpoint"]["l2_distance"], l2, rtol=1e-4)
