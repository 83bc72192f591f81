"""Fine-tuning a pretrained variant on a GLUE task and scoring it on the task's dev split."""

import keras

from albert_tf.glue import features as glue_features
from albert_tf.glue import training
from albert_tf.glue.examples import read_examples
from albert_tf.glue.metrics import majority_baseline
from albert_tf.glue.tasks import get_task
from albert_tf.models import AlbertClassifier, copied
from albert_tf.text.tokenization import AlbertTokenizer
from albert_tf.training.optimization import fine_tuning_optimizer


def split_data(task, split, setup):
    """(feature file, labels) of one split, featurized once into the experiment's cache."""
    tokenizer = AlbertTokenizer(setup.spm_model_file)
    example_set = read_examples(task, split, setup.glue_data_dir)
    path = glue_features.cached_features(task, split, example_set, tokenizer,
                                         setup.finetune_max_seq_length, setup.path("glue_cache"))
    return path, [glue_features.label_value(task, example.label) for example in example_set.examples]


def fine_tune_and_score(backbone, setup):
    """Dev metrics of a copy of `backbone` fine-tuned `setup.finetune_steps` (the backbone itself
    is left as it is, so the caller can still measure it)."""
    task = get_task(setup.finetune_task)
    train_path, _ = split_data(task, "train", setup)
    dev_path, dev_labels = split_data(task, "dev", setup)
    keras.utils.set_random_seed(setup.seed)
    copy = copied(backbone, kernels="reference")
    classifier = AlbertClassifier(backbone=copy, num_labels=task.num_labels)
    model = training.logits_model(classifier)
    model.compile(
        optimizer=fine_tuning_optimizer("adamw", setup.finetune_learning_rate, setup.finetune_steps,
                                        setup.finetune_steps // 10),
        loss=training.task_loss(task),
    )
    train = glue_features.make_dataset(task, train_path, setup.finetune_batch_size,
                                       setup.finetune_max_seq_length, training=True, seed=setup.seed)
    model.fit(train, epochs=1, steps_per_epoch=setup.finetune_steps, verbose=0)
    dev = glue_features.make_dataset(task, dev_path, setup.finetune_batch_size, setup.finetune_max_seq_length)
    return training.evaluate(task, model, [training.EvalSet("", dev, dev_labels)])


def majority_dev_accuracy(setup):
    """Dev accuracy of always answering the training split's commoner class: the floor to beat."""
    task = get_task(setup.finetune_task)
    _, train_labels = split_data(task, "train", setup)
    _, dev_labels = split_data(task, "dev", setup)
    return majority_baseline(task, train_labels, dev_labels)["accuracy"]


def dev_examples(setup):
    """How many dev examples the fine-tuned accuracy is over: the n of its error bar."""
    return len(split_data(get_task(setup.finetune_task), "dev", setup)[1])
