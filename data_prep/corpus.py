"""Input text: expanding `--input_file`, cutting files into byte-range chunks, reading a chunk.

Why byte ranges: they need no pass over the corpus to plan (only file sizes), each chunk is read
on its own with one seek, and memory is bounded by the chunk size. A line belongs to the chunk
that holds its first byte; a chunk border inside a document ends that document, as the end of a
file does (one extra document break per chunk, see docs/data.md).

Format, as in the original: one sentence per line, a blank line between documents (a longer line,
e.g. a paragraph, is counted and reported: it becomes one truncated segment).
"""

import array
import dataclasses
import glob

from absl import logging

from albert_tf.text.tokenization import preprocess_text


@dataclasses.dataclass(frozen=True)
class Chunk:
    """Bytes [start, end) of `path`; `index` numbers chunks over all inputs, in input order."""

    index: int
    path: str
    start: int
    end: int


def expand_input_patterns(input_file, files, is_excluded=lambda path: False):
    """`--input_file` (comma-separated paths and globs) -> sorted matches, pattern by pattern.

    A glob match for which `is_excluded(path)` holds (the builder's own output) is skipped with a
    warning; a path named without a glob is an error.
    """
    patterns = [pattern.strip() for pattern in (input_file or "").split(",") if pattern.strip()]
    if not patterns:
        raise ValueError("--input_file is required (text files: one sentence per line, blank line "
                         "between documents; comma-separated paths or globs)")
    paths = []
    for pattern in patterns:
        matches = files.glob(pattern)
        if not matches:
            raise FileNotFoundError(f"--input_file: {pattern!r} matches no file")
        for path in matches:
            if not is_excluded(path):
                paths.append(path)
            elif glob.has_magic(pattern):
                logging.warning("--input_file: skipping %s, written by this builder (not text)", path)
            else:
                raise ValueError(f"--input_file: {path!r} was written by this builder (TFRecord "
                                 "or statistics), not raw text")
    if not paths:
        raise ValueError(f"--input_file: {input_file!r} matches only files this builder wrote")
    return paths


def plan_chunks(paths, files, chunk_bytes):
    chunks = []
    for path in paths:
        size = files.size(path)
        for start in range(0, size, chunk_bytes):
            chunks.append(Chunk(len(chunks), path, start, min(start + chunk_bytes, size)))
    return chunks


def require_some_text(paths, files, block_bytes=1 << 20):
    """Fails with a one-line error unless some input file has a non-whitespace byte."""
    for path in paths:
        with files.open_read(path) as handle:
            while block := handle.read(block_bytes):
                if block.strip():
                    return
    raise ValueError(f"--input_file: no text in {', '.join(paths)} (the files are empty or blank)")


def _first_line_start(handle, chunk):
    """Seeks `handle` to the chunk's first line (the first that starts in it) and returns its offset."""
    handle.seek(max(chunk.start - 1, 0))
    if chunk.start > 0 and handle.read(1) != b"\n":
        handle.readline()  # the end of a line that the previous chunk owns
    return handle.tell()


def chunk_lines(handle, chunk):
    """The raw lines (bytes, with their newline) whose first byte lies in the chunk."""
    position = _first_line_start(handle, chunk)
    while position < chunk.end:
        line = handle.readline()
        if not line:
            return
        yield line
        position += len(line)


def read_documents(files, chunk, tokenizer, stats, sequence_tokens):
    """The chunk's documents: lists of lines as arrays of token ids (int32, compact).

    Lines that are not valid UTF-8 are decoded with U+FFFD replacements and counted; so are lines
    with more than `sequence_tokens` tokens (`long_lines`, the first kept as an example): the
    instance builder truncates them, which is how paragraph-per-line input loses text. As in the
    original, a line that is blank after normalisation ends a document, and a non-blank line with
    no tokens is dropped. `documents` counts the input's documents: one that a chunk border
    splits counts in the chunk where it begins, not again in the next.
    """
    documents = []
    document = []
    with files.open_read(chunk.path) as handle:
        first_continues = chunk.start > 0 and _continues_a_document(handle, _first_line_start(handle, chunk), tokenizer)
        position = _first_line_start(handle, chunk)
        for raw_line in chunk_lines(handle, chunk):
            line_start, position = position, position + len(raw_line)
            stats.count("lines")
            stats.count("input_bytes", len(raw_line))
            try:
                line = raw_line.decode("utf-8")
            except UnicodeDecodeError:
                line = raw_line.decode("utf-8", errors="replace")
                stats.count("non_utf8_lines")
            token_ids = line_token_ids(line, tokenizer)
            if token_ids and len(token_ids) > sequence_tokens:
                stats.count("long_lines")
                stats.keep_example("long_lines", chunk.index, chunk.path, line_start, line)
            if token_ids:
                document.append(array.array("i", token_ids))
            elif token_ids is None:
                if document:
                    documents.append(document)
                    document = []
                elif not documents:  # a break before any text: what the previous chunk left open ends here
                    first_continues = False
    if document:
        documents.append(document)
    stats.count("documents", len(documents) - (first_continues and bool(documents)))
    return documents


def line_token_ids(line, tokenizer):
    """The token ids of a line of text; [] for a line that is dropped, None for one that ends a
    document (blank, or blank once normalised, as the original's SentencePiece path sees it)."""
    if line.strip():
        token_ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))
        if token_ids or not tokenizer.is_spm or preprocess_text(line, lower=tokenizer.do_lower_case):
            return token_ids
    return None


def _continues_a_document(handle, line_start, tokenizer):
    """Whether a document is open at byte `line_start` (a line start): the nearest line before it
    that is not dropped has tokens, rather than ending a document (or there being none)."""
    for raw_line in _lines_before(handle, line_start):
        token_ids = line_token_ids(raw_line.decode("utf-8", errors="replace"), tokenizer)
        if token_ids is None:
            return False
        if token_ids:
            return True
    return False


def _lines_before(handle, end, block_bytes=1 << 16):
    """The raw lines before byte `end` (a line start), nearest first, read backwards in blocks."""
    buffer, buffer_start, line_end = b"", end, end
    while line_end > 0:
        newline = buffer.rfind(b"\n", 0, max(line_end - buffer_start - 1, 0))
        while newline < 0 and buffer_start > 0:
            read_start = max(0, buffer_start - block_bytes)
            handle.seek(read_start)
            buffer = handle.read(buffer_start - read_start) + buffer
            buffer_start = read_start
            newline = buffer.rfind(b"\n", 0, line_end - buffer_start - 1)
        line_start = buffer_start + newline + 1
        yield buffer[line_start - buffer_start:line_end - buffer_start]
        line_end = line_start
