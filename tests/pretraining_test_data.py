"""Helpers shared by the pretraining tests: a very small model, random TFRecords in the
original schema, running `run_pretraining.py` in a child process, reading checkpoint weights."""

import json
import os
import sys

import numpy as np
import tensorflow as tf

import script_process

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ_LENGTH = 16
PREDICTIONS = 4
VOCAB_SIZE = 64

# Smaller than configs/albert_tiny.json (whose 30k vocabulary dominates a CPU step).
TEST_CONFIG = {
    "vocab_size": VOCAB_SIZE,
    "embedding_size": 8,
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "max_position_embeddings": 32,
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
}


def write_config(directory):
    path = os.path.join(directory, "albert_config.json")
    with open(path, "w") as handle:
        json.dump(TEST_CONFIG, handle)
    return path


def write_random_records(path, num_examples, seed=0):
    """Examples with every feature of the original schema (reference 4.5), random contents."""
    rng = np.random.default_rng(seed)

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(num_examples):
            length = int(rng.integers(SEQ_LENGTH // 2, SEQ_LENGTH + 1))
            ids = np.zeros(SEQ_LENGTH, np.int64)
            ids[:length] = rng.integers(5, VOCAB_SIZE, length)
            mask = (np.arange(SEQ_LENGTH) < length).astype(np.int64)
            segments = ((np.arange(SEQ_LENGTH) >= length // 2) & (mask == 1)).astype(np.int64)
            num_masked = int(rng.integers(1, PREDICTIONS + 1))
            positions = np.zeros(PREDICTIONS, np.int64)
            positions[:num_masked] = np.sort(rng.choice(np.arange(1, length), num_masked, replace=False))
            masked_ids = np.zeros(PREDICTIONS, np.int64)
            masked_ids[:num_masked] = ids[positions[:num_masked]]
            weights = (np.arange(PREDICTIONS) < num_masked).astype(np.float32)
            features = {
                "input_ids": ints(ids),
                "input_mask": ints(mask),
                "segment_ids": ints(segments),
                "token_boundary": ints(mask),
                "masked_lm_positions": ints(positions),
                "masked_lm_ids": ints(masked_ids),
                "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=weights)),
                "next_sentence_labels": ints([rng.integers(0, 2)]),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    return path


def small_run_flags(tmp_path, output_dir, **overrides):
    """Flags for a run of the test model on random records (written once per directory)."""
    records = os.path.join(tmp_path, "train.tfrecord")
    if not os.path.exists(records):
        write_random_records(records, 256)
    settings = {
        "albert_config_file": write_config(str(tmp_path)),
        "input_file": records,
        "output_dir": output_dir,
        "max_seq_length": SEQ_LENGTH,
        "max_predictions_per_seq": PREDICTIONS,
        "train_batch_size": 8,
        "num_train_steps": 8,
        "num_warmup_steps": 2,
        "learning_rate": 0.01,
        "iterations_per_loop": 2,
        "save_checkpoints_steps": 4,
        "do_eval": False,
        "seed": 7,
    }
    settings.update(overrides)
    return [f"--{name}={value}" for name, value in settings.items()]


def script_command(flag_list):
    return [sys.executable, os.path.join(REPO_ROOT, "run_pretraining.py")] + flag_list


def run_script(flag_list, timeout=300, env=None):
    """Runs run_pretraining.py to completion (killed after `timeout` seconds), forked from a waiting
    interpreter (`script_process`)."""
    full_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    return script_process.run_python(script_command(flag_list)[1:], cwd=REPO_ROOT, env=full_env, timeout=timeout)


def model_weights(checkpoint_prefix):
    """{name: array} of the model's variables in one of our checkpoints."""
    from albert_tf.checkpoints import model_weight_keys

    reader = tf.train.load_checkpoint(checkpoint_prefix)
    return {path: reader.get_tensor(key) for path, key in model_weight_keys(checkpoint_prefix).items()}


def assert_same_weights(left, right, rtol=1e-5, atol=1e-6):
    assert left.keys() == right.keys() and any("encoder" in name for name in left)
    for name in left:
        np.testing.assert_allclose(left[name], right[name], rtol=rtol, atol=atol, err_msg=name)


def train_in_process(strategy, files, steps, grad_accum_steps=1, batch_size=8, **settings):
    """Trains the test model with `PretrainingTrainer` for `steps` from the same seeded initial
    weights every time; returns (initial weights, final weights, metrics)."""
    import keras

    from albert_tf import AlbertConfig
    from albert_tf.pretraining.trainer import PretrainingTrainer, TrainerSettings
    from albert_tf.pretraining.data import pretraining_dataset

    settings = TrainerSettings(
        train_batch_size=batch_size, num_train_steps=20, learning_rate=0.01, num_warmup_steps=2, grad_accum_steps=grad_accum_steps, **settings,
    )
    keras.utils.set_random_seed(1)
    trainer = PretrainingTrainer(strategy, AlbertConfig.from_dict(TEST_CONFIG), settings)
    initial_weights = trainer.model.get_weights()
    dataset = strategy.distribute_datasets_from_function(
        lambda context: pretraining_dataset(files, SEQ_LENGTH, PREDICTIONS, batch_size, input_context=context, seed=3)
    )
    trainer.train_loop(iter(dataset), steps)
    return initial_weights, trainer.model.get_weights(), trainer.train_metrics.result()
