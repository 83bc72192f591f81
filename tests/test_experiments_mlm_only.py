"""The MLM-only trainer (paper Table 5, "None"): its gradient is the MLM loss's, and the sentence
head and pooler never move."""

import numpy as np
import tensorflow as tf

from albert_cli.experiments.data import pretraining_files
from albert_cli.experiments.mlm_only import MODEL_INPUTS, MlmOnlyTrainer
from albert_tf.training.distribute import get_strategy
from albert_tf.pretraining.losses import pretraining_losses
from albert_tf.pretraining.trainer import TrainerSettings
from albert_tf.pretraining.data import pretraining_dataset
from tests.experiments_test_data import tiny_setup


def _trainer_and_data(tmp_path):
    setup = tiny_setup(tmp_path)
    train_file, _ = pretraining_files(setup)
    tf.keras.utils.set_random_seed(3)
    settings = TrainerSettings(train_batch_size=setup.train_batch_size, num_train_steps=3, learning_rate=0.01,
                               num_warmup_steps=0, kernels="reference")
    trainer = MlmOnlyTrainer(get_strategy("one_device"), setup.base_config(), settings)
    dataset = pretraining_dataset(train_file, setup.max_seq_length, setup.max_predictions_per_seq,
                                  setup.train_batch_size, is_training=True, seed=1)
    return trainer, dataset


def test_sentence_head_and_pooler_stay_at_their_initial_values(tmp_path):
    trainer, dataset = _trainer_and_data(tmp_path)
    model = trainer.model
    frozen = model.sentence_order_head.weights + model.albert.pooler.weights
    trained = model.albert.encoder.weights + model.albert.embeddings.weights
    frozen_before = [variable.numpy() for variable in frozen]
    trained_before = [variable.numpy() for variable in trained]
    trainer.train_loop(iter(dataset), 3)
    assert trainer.step == 3
    for variable, before in zip(frozen, frozen_before):
        np.testing.assert_array_equal(variable.numpy(), before, err_msg=variable.path)
    assert all(np.any(variable.numpy() != before) for variable, before in zip(trained, trained_before))


def test_gradient_is_the_masked_lm_loss_gradient(tmp_path):
    trainer, dataset = _trainer_and_data(tmp_path)
    features = next(iter(dataset))
    weight_total = tf.reduce_sum(features["masked_lm_weights"])
    gradients, _ = trainer._gradients(features, weight_total)  # pylint: disable=protected-access
    variables = trainer.model.trainable_variables
    inputs = {name: features[name] for name in MODEL_INPUTS}
    with tf.GradientTape(persistent=True) as tape:
        outputs = trainer.model(inputs, training=True)
        masked_lm = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=features["masked_lm_ids"],
                                                                   logits=outputs["mlm_logits"])
        mlm_loss = tf.reduce_sum(masked_lm * features["masked_lm_weights"]) / (weight_total + 1e-5)
        both = pretraining_losses(outputs, features, weight_total, trainer.settings.train_batch_size).loss
    expected = tape.gradient(mlm_loss, variables)
    for gradient, want, variable in zip(gradients, expected, variables):
        np.testing.assert_allclose(gradient.numpy(), tf.convert_to_tensor(want).numpy(), rtol=1e-4, atol=1e-7,
                                   err_msg=variable.path)
    # The same model's MLM + sentence loss would move the encoder differently.
    with_sentence_loss = tape.gradient(both, variables)
    assert any(not np.allclose(tf.convert_to_tensor(full).numpy(), gradient.numpy(), rtol=1e-3, atol=1e-6)
               for full, gradient in zip(with_sentence_loss, gradients))
