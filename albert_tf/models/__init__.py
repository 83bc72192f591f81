"""ALBERT models: the backbone and its task models."""

from albert_tf.models.albert_model import AlbertModel
from albert_tf.models.classifier_model import AlbertClassifier
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.models.pretraining_model import AlbertPretrainingModel
from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.models.serialization import copied, load_model, rebuilt
