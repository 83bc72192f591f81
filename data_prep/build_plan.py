"""Validated settings and the chunk-to-shard plan, shared by the local and the Beam runners.

Both runners build the same `BuildPlan` and hand each output shard to `shard_builder`, which is
why they write byte-identical files. The plan is plain data, so it pickles to worker processes.
"""

import dataclasses
import hashlib
import json
import os

import numpy as np
from absl import logging

from albert_tf.json_text import parse_json
from albert_tf.text.tokenization import AlbertTokenizer
from data_prep import corpus, own_outputs
from data_prep.file_access import sidecar_name
from data_prep.own_outputs import STATS_SUFFIX
from data_prep.pretraining_instances import InstanceOptions

MIN_CHUNK_BYTES = 1024
# Bump when a change to the algorithm or the format changes the bytes written for the same
# settings: shards recorded with another version are rebuilt instead of skipped.
FORMAT_VERSION = 2  # 2: records shuffled across the whole shard


@dataclasses.dataclass(frozen=True)
class TokenizerSpec:
    spm_model_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True

    def load(self):
        return AlbertTokenizer(spm_model_file=self.spm_model_file, do_lower_case=self.do_lower_case,
                               vocab_file=self.vocab_file)


@dataclasses.dataclass(frozen=True)
class BuildPlan:
    """Everything that determines the output bytes, plus where they go."""

    options: InstanceOptions
    tokenizer: TokenizerSpec
    tokenizer_sha256: str
    random_seed: int
    dupe_factor: int
    chunks: tuple
    output_files: tuple
    stats_file: str

    @property
    def num_shards(self):
        return len(self.output_files)

    def shard_chunks(self, shard_index):
        """Chunks are dealt round-robin to shards, so every shard gets a similar share of text."""
        return self.chunks[shard_index::self.num_shards]

    def shard_sidecar(self, shard_index):
        return sidecar_name(self.output_files[shard_index], STATS_SUFFIX)

    def shard_fingerprint(self, shard_index):
        """Hash of all that shapes this shard's bytes: a rerun skips the shard only if it matches."""
        description = {
            "format_version": FORMAT_VERSION,
            "options": dataclasses.asdict(self.options),
            "tokenizer_sha256": self.tokenizer_sha256,
            "do_lower_case": self.tokenizer.do_lower_case,
            "random_seed": self.random_seed,
            "dupe_factor": self.dupe_factor,
            "num_shards": self.num_shards,
            "chunks": [dataclasses.astuple(chunk) for chunk in self.shard_chunks(shard_index)],
        }
        return hashlib.sha256(json.dumps(description, sort_keys=True).encode("utf-8")).hexdigest()

    def settings(self):
        """The settings as recorded in the statistics file."""
        return {
            **dataclasses.asdict(self.options),
            "spm_model_file": self.tokenizer.spm_model_file,
            "vocab_file": self.tokenizer.vocab_file,
            "do_lower_case": self.tokenizer.do_lower_case,
            "random_seed": self.random_seed,
            "dupe_factor": self.dupe_factor,
            "num_input_chunks": len(self.chunks),
        }


def chunk_seed(random_seed, chunk_index, dupe_index):
    """Seed of one pass over one chunk: independent streams from one `--random_seed`."""
    words = np.random.SeedSequence(random_seed, spawn_key=(chunk_index, dupe_index)).generate_state(4)
    return int.from_bytes(words.tobytes(), "little")


def shard_seed(random_seed, shard_index):
    """Seed of the shuffle of one output shard's records (a stream apart from the chunks')."""
    words = np.random.SeedSequence(random_seed, spawn_key=(shard_index,)).generate_state(4)
    return int.from_bytes(words.tobytes(), "little")


def output_paths(output_file, num_output_shards):
    """(shard paths, statistics path) for a comma list of files or a prefix with N shards."""
    if not output_file:
        raise ValueError("--output_file is required")
    if num_output_shards:
        if "," in output_file:
            raise ValueError("--output_file must be one prefix (no commas) when --num_output_shards is set")
        names = [f"{output_file}-{i:05d}-of-{num_output_shards:05d}" for i in range(num_output_shards)]
        return names, output_file + STATS_SUFFIX
    names = [name.strip() for name in output_file.split(",") if name.strip()]
    if not names:
        raise ValueError("--output_file is required")
    if len(set(names)) != len(names):
        raise ValueError(f"--output_file lists a file twice: {output_file!r}")
    return names, names[0] + STATS_SUFFIX


def make_plan(files, input_file, output_file, spm_model_file=None, vocab_file=None,
              do_lower_case=True, random_seed=12345, dupe_factor=40, num_output_shards=0,
              input_chunk_bytes=1 << 20, albert_config_file=None, **instance_options):
    """Checks every setting and input; returns (plan, loaded tokenizer). Raises ValueError or
    FileNotFoundError naming the setting (by its flag) and what was expected."""
    if dupe_factor < 1:
        raise ValueError(f"--dupe_factor must be >= 1, got {dupe_factor}")
    if random_seed < 0:
        raise ValueError(f"--random_seed must be >= 0, got {random_seed}")
    if num_output_shards < 0:
        raise ValueError(f"--num_output_shards must be >= 0, got {num_output_shards}")
    if input_chunk_bytes < MIN_CHUNK_BYTES:
        raise ValueError(f"--input_chunk_bytes must be >= {MIN_CHUNK_BYTES}, got {input_chunk_bytes}")
    try:
        options = InstanceOptions(**instance_options)
    except ValueError as error:
        raise ValueError(str(error)) from None
    if not (spm_model_file or vocab_file):
        raise ValueError("--spm_model_file (a SentencePiece .model) or --vocab_file (WordPiece) is required")
    tokenizer_spec = TokenizerSpec(spm_model_file or None, None if spm_model_file else vocab_file,
                                   do_lower_case)
    for flag, path in (("--spm_model_file", tokenizer_spec.spm_model_file),
                       ("--vocab_file", tokenizer_spec.vocab_file)):
        if path is not None and not files.exists(path):
            raise FileNotFoundError(f"{flag}: {path!r} does not exist")
    try:
        tokenizer = tokenizer_spec.load()
    except ValueError as error:
        raise ValueError(str(error)) from None
    if albert_config_file:
        _require_config_vocab_size(files, albert_config_file, tokenizer.vocab_size,
                                   spm_model_file or vocab_file)

    outputs, stats_file = output_paths(output_file, num_output_shards)
    paths = corpus.expand_input_patterns(input_file, files,
                                         lambda path: own_outputs.is_builder_file(files, path))
    own_outputs.require_no_overlap(paths, outputs + [stats_file])
    corpus.require_some_text(paths, files)
    for path in outputs + [stats_file]:
        if files.is_dir(path):
            raise ValueError(f"--output_file: {path!r} is a directory")
    for directory in sorted({os.path.dirname(path) or "." for path in outputs + [stats_file]}):
        _require_writable_directory(files, directory)
    model_file = tokenizer_spec.spm_model_file or tokenizer_spec.vocab_file
    with files.open_read(model_file) as handle:
        tokenizer_sha256 = hashlib.sha256(handle.read()).hexdigest()
    chunks = _chunks_for_every_output(paths, files, input_chunk_bytes, len(outputs))
    plan = BuildPlan(options, tokenizer_spec, tokenizer_sha256, random_seed, dupe_factor, tuple(chunks),
                     tuple(outputs), stats_file)
    return plan, tokenizer


def _chunks_for_every_output(paths, files, chunk_bytes, num_outputs):
    """The input's chunks, at least one per output file: with fewer chunks of `chunk_bytes` than
    outputs (a small corpus), smaller chunks (down to 1 KiB), so that no output is left empty."""
    chunks = corpus.plan_chunks(paths, files, chunk_bytes)
    if len(chunks) >= num_outputs:
        return chunks
    smaller = max(MIN_CHUNK_BYTES, sum(files.size(path) for path in paths) // num_outputs)
    chunks = corpus.plan_chunks(paths, files, smaller)
    if len(chunks) < num_outputs:
        raise ValueError(f"--num_output_shards: {num_outputs} output files, but the input is only "
                         f"{len(chunks)} chunk(s) of {MIN_CHUNK_BYTES} bytes: some files would be empty; "
                         "write fewer output files")
    logging.info("input chunks of %d bytes (not --input_chunk_bytes=%d), so that each of the %d output "
                 "files gets text", smaller, chunk_bytes, num_outputs)
    return chunks


def _require_config_vocab_size(files, albert_config_file, vocab_size, vocab_source):
    if not files.exists(albert_config_file):
        raise FileNotFoundError(f"--albert_config_file: {albert_config_file!r} does not exist")
    if files.is_dir(albert_config_file):
        raise ValueError(f"--albert_config_file: {albert_config_file!r} is a directory, not a config JSON")
    try:
        with files.open_read(albert_config_file) as handle:
            config = parse_json(handle.read().decode("utf-8"))
        config_vocab_size = int(config["vocab_size"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--albert_config_file {albert_config_file!r} is not an ALBERT config JSON "
                         f"with an integer \"vocab_size\" ({type(error).__name__}: {error})") from None
    if config_vocab_size != vocab_size:
        raise ValueError(f"--albert_config_file {albert_config_file!r} has vocab_size {config_vocab_size}, but "
                         f"{vocab_source!r} has {vocab_size} tokens: the model could not embed these ids")


def _require_writable_directory(files, directory):
    try:
        files.makedirs(directory)
        probe = sidecar_name(os.path.join(directory, "probe"), f".{os.getpid()}.writable")
        with files.open_write(probe):
            pass
        files.delete(probe)
    except OSError as error:
        raise ValueError(f"--output_file: cannot write to {directory!r} ({error.strerror or error})") from None
