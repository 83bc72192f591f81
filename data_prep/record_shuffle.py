"""A shuffle of a shard's records across all its chunks and passes, in bounded memory.

The original builds every instance in memory and shuffles them all before writing. The streaming
builder reads the corpus a chunk at a time, so a shard written chunk after chunk would hold the
corpus in order, and a reader's shuffle buffer (thousands of records) cannot undo that: a run
shorter than an epoch would train on the first books only. Here each record goes to one of up to
`MAX_BUCKETS` temporary files at random; each bucket is then read back (one pass over one chunk
of records on average, the memory the builder already needs, while a shard has at most
`MAX_BUCKETS` passes), shuffled and written out. Every record
lands anywhere in the shard with equal chance. Python's own files and `random` serve: the buckets
are local scratch space, whatever file system the shard goes to.
"""

import os
import random
import struct
import tempfile

MAX_BUCKETS = 256
_LENGTH = struct.Struct("<Q")


class ShuffledRecords:
    """Collects framed records with `add` and writes them, shuffled, with `write_to`."""

    def __init__(self, num_records_hint, seed):
        self.num_buckets = max(1, min(MAX_BUCKETS, num_records_hint))
        self.rng = random.Random(seed)
        self.directory = tempfile.TemporaryDirectory(prefix="albert-shuffle-")
        self.buckets = [None] * self.num_buckets

    def add(self, records):
        for record in records:
            index = self.rng.randrange(self.num_buckets)
            if self.buckets[index] is None:
                self.buckets[index] = open(os.path.join(self.directory.name, str(index)), "w+b")
            self.buckets[index].write(_LENGTH.pack(len(record)) + record)

    def write_to(self, handle):
        for bucket in self.buckets:
            if bucket is None:
                continue
            bucket.seek(0)
            data = bucket.read()
            records, offset = [], 0
            while offset < len(data):
                (length,) = _LENGTH.unpack_from(data, offset)
                offset += _LENGTH.size
                records.append(data[offset:offset + length])
                offset += length
            self.rng.shuffle(records)
            handle.write(b"".join(records))

    def close(self):
        for bucket in self.buckets:
            if bucket is not None:
                bucket.close()
        self.directory.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
