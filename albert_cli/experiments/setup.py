"""`Setup`: what every experiment shares: corpus, output directory, seed and the training budget.

Every variant of an experiment trains with the same `Setup` (same data, steps, batch and seed), so
the comparison isolates the one thing the experiment varies. The defaults fit a 2-core CPU (about
an hour per experiment at most); `scaled(k)` multiplies the step counts for bigger machines.
"""

import codecs
import dataclasses
import math
import os

from albert_tf.config import AlbertConfig
from albert_tf.io_utils import refuse_overwriting_inputs
from albert_cli.bundled import GLUE_SAMPLES, PRETRAINING_CORPUS, SPM_MODEL

VOCAB_SIZE = 30000  # the bundled SentencePiece model's
RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
FIGURE_PNG = "figure.png"
# The files an experiment writes under its output directory, besides its TFRecords.
OUTPUTS = (("data", "train.txt"), ("data", "heldout.txt"), (RESULTS_JSON,), (RESULTS_MD,), (FIGURE_PNG,))


@dataclasses.dataclass(frozen=True)
class Setup:
    """Settings of one experiment run; `output_dir` receives results.json, results.md, the figure."""

    output_dir: str
    corpus_file: str = PRETRAINING_CORPUS
    spm_model_file: str = SPM_MODEL
    seed: int = 12345
    kernels: str = "auto"
    # The pretrained model every variant starts from (the experiment changes one thing in it), and
    # its data and budget: those of `run_pretraining.py`'s bundled default (configs/albert_tiny.json,
    # 1,000 steps), measured to leave the unigram plateau and to beat the held-out SOP majority
    # rate (docs/results.md); with fewer steps every variant stays at those floors.
    hidden_size: int = 128
    num_hidden_layers: int = 4
    num_attention_heads: int = 2
    intermediate_size: int = 512
    embedding_size: int = 64
    # Pretraining data and budget.
    max_seq_length: int = 64
    max_predictions_per_seq: int = 10
    dupe_factor: int = 3
    heldout_documents: int = 2
    train_batch_size: int = 32
    train_steps: int = 1000
    learning_rate: float = 0.01  # LAMB, as run_pretraining.py's CPU-scale default
    eval_batches: int = 40
    # Fine-tuning: a two-sentence GLUE task, trained on its train split, scored on its dev split.
    glue_data_dir: str = GLUE_SAMPLES
    finetune_task: str = "MRPC"
    finetune_max_seq_length: int = 128
    finetune_steps: int = 150
    finetune_batch_size: int = 16
    finetune_learning_rate: float = 5e-5

    def scaled(self, scale):
        """The same setup with `scale` times the pretraining and fine-tuning steps."""
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"--scale must be a finite number > 0, got {scale}")
        return dataclasses.replace(
            self,
            train_steps=max(1, round(self.train_steps * scale)),
            finetune_steps=max(1, round(self.finetune_steps * scale)),
        )

    def base_config(self, **changes):
        """The experiment's model (all-shared ALBERT of the setup's size), with `changes` applied."""
        config = AlbertConfig(
            vocab_size=VOCAB_SIZE,
            embedding_size=self.embedding_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=max(512, self.max_seq_length),
        )
        return config.replace(**changes) if changes else config

    def path(self, *parts):
        return os.path.join(self.output_dir, *parts)

    def check(self):
        """Raises FileNotFoundError / ValueError naming the flag, before any work is done."""
        for flag, path in (("--corpus_file", self.corpus_file), ("--spm_model_file", self.spm_model_file)):
            if os.path.isdir(path):
                raise ValueError(f"{flag}: {path} is a directory; expected a file")
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{flag}: {path} does not exist")
        require_utf8_text("--corpus_file", self.corpus_file)
        refuse_overwriting_inputs([("--output_dir", self.path(*parts)) for parts in OUTPUTS],
                                  [("--corpus_file", self.corpus_file)])
        task_dir = os.path.join(self.glue_data_dir, self.finetune_task)
        if not os.path.isdir(task_dir):
            raise FileNotFoundError(f"--glue_data_dir: {task_dir} does not exist (expected "
                                    f"<glue_data_dir>/{self.finetune_task}/train.tsv and dev.tsv)")
        for name in ("train_steps", "train_batch_size", "eval_batches", "finetune_steps", "max_seq_length"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name} must be > 0, got {getattr(self, name)}")
        if self.max_predictions_per_seq > self.max_seq_length:
            raise ValueError(f"--max_predictions_per_seq ({self.max_predictions_per_seq}) must be <= "
                             f"--max_seq_length ({self.max_seq_length})")


def require_utf8_text(flag, path, block_bytes=1 << 20):
    """Raises ValueError naming `flag` and `path` unless the file is UTF-8 text (the experiments'
    corpus split reads it as such; a binary file would fail there, after the output was created)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with open(path, "rb") as handle:
        while True:
            block = handle.read(block_bytes)
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as error:
                raise ValueError(f"{flag}: {path} is not UTF-8 text ({error.reason} near byte "
                                 f"{offset + error.start}); expected raw text, a blank line between documents") from None
            if not block:
                return
            offset += len(block)
