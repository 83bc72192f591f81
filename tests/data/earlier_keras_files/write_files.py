"""Writes this directory's Keras files with the models of an earlier commit (they were written with
dc9d135, the last commit before `AlbertPretrainingModel` and `AlbertMultipleChoice` called their
backbone as one layer):

    git worktree add --detach /tmp/albert_dc9d135 dc9d135
    PYTHONPATH=/tmp/albert_dc9d135 python3 tests/data/earlier_keras_files/write_files.py tests/data/earlier_keras_files

For each model, `<name>.keras` and `<name>.weights.h5` of one model with seeded random weights, and
`<name>.npz` (numbers only): its inputs (`input:*`), its inference outputs on them (`output:*`) and
its weights under the original's TF1 names (`weight:*`); for SQuAD v2.0 also a `tf.train.Checkpoint`
of the model, as fine-tuning writes them (`question_answering_v2_checkpoint/`).
"""

import os
import sys

import numpy as np
import tensorflow as tf

from albert_tf.checkpoints import tf1_variables
from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertPretrainingModel
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.models.question_answering_model import AlbertQuestionAnswering

CONFIG = AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=32)
BATCH, LENGTH, NUM_CHOICES = 2, 12, 3


def text_inputs(rng, shape):
    lengths = rng.integers(shape[-1] // 2, shape[-1] + 1, size=shape[:-1])
    mask = (np.arange(shape[-1]) < lengths[..., np.newaxis]).astype(np.int32)
    return {
        "input_word_ids": (rng.integers(5, CONFIG.vocab_size, size=shape) * mask).astype(np.int32),
        "input_mask": mask,
        "input_type_ids": ((np.arange(shape[-1]) >= shape[-1] // 2) * mask).astype(np.int32),
    }


def models(rng):
    """(name, model, inputs) of every model whose files this directory holds."""
    pretraining_inputs = dict(text_inputs(rng, (BATCH, LENGTH)),
                              masked_lm_positions=rng.integers(1, LENGTH // 2, size=(BATCH, 3)).astype(np.int32))
    yield "pretraining", AlbertPretrainingModel(CONFIG), pretraining_inputs
    yield ("multiple_choice", AlbertMultipleChoice(CONFIG, num_choices=NUM_CHOICES),
           text_inputs(rng, (BATCH, NUM_CHOICES, LENGTH)))
    for version_2 in (False, True):
        inputs = text_inputs(rng, (BATCH, LENGTH))
        inputs["p_mask"] = 1 - inputs["input_type_ids"] * inputs["input_mask"]  # answers in the second segment
        inputs["p_mask"][:, 0] = 0  # [CLS]: no answer
        model = AlbertQuestionAnswering(CONFIG, version_2_with_negative=version_2, start_n_top=3, end_n_top=2)
        yield f"question_answering_v{2 if version_2 else 1}", model, inputs


def main(directory):
    rng = np.random.default_rng(41)
    CONFIG.to_json_file(os.path.join(directory, "albert_config.json"))
    for name, model, inputs in models(rng):
        model(inputs, training=False)  # builds the weights (the subclassed models of then)
        for variable in model.weights:
            variable.assign(rng.standard_normal(tuple(variable.shape)).astype(np.float32) * 0.3)
        outputs = model(inputs, training=False)
        outputs = outputs if isinstance(outputs, dict) else {"logits": outputs}
        model.save(os.path.join(directory, f"{name}.keras"))
        model.save_weights(os.path.join(directory, f"{name}.weights.h5"))
        arrays = {f"input:{key}": value for key, value in inputs.items()}
        arrays.update({f"output:{key}": np.asarray(value) for key, value in outputs.items()})
        arrays.update({f"weight:{key}": variable.numpy() for key, variable in tf1_variables(model).items()})
        np.savez(os.path.join(directory, f"{name}.npz"), **arrays)
        if name == "question_answering_v2":  # as run_squad.py keeps the model in its checkpoints
            tf.train.Checkpoint(model=model).write(os.path.join(directory, f"{name}_checkpoint", "ckpt"))


if __name__ == "__main__":
    main(sys.argv[1])
