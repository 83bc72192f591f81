"""The TensorFlow-free TFRecord writer and Example encoder agree with TensorFlow byte for byte."""

import random

import pytest
import tensorflow as tf

from data_prep import tfrecord


def test_crc32c_check_values():
    # The CRC-32C check value and the RFC 3720 (iSCSI) B.4 vectors.
    assert tfrecord.crc32c(b"123456789") == 0xE3069283
    assert tfrecord.crc32c(bytes(32)) == 0x8A9136AA
    assert tfrecord.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tfrecord.crc32c(bytes(range(32))) == 0x46DD794E


def test_framed_records_are_the_bytes_tensorflow_writes(tmp_path):
    payloads = [b"", b"x", random.Random(0).randbytes(300), random.Random(1).randbytes(5000)]
    expected_path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(expected_path) as writer:
        for payload in payloads:
            writer.write(payload)
    with open(expected_path, "rb") as handle:
        assert b"".join(tfrecord.frame_record(p) for p in payloads) == handle.read()
    assert list(tfrecord.read_records(expected_path)) == payloads


def test_read_records_rejects_a_corrupted_record(tmp_path):
    path = tmp_path / "bad.tfrecord"
    record = bytearray(tfrecord.frame_record(b"hello world"))
    record[14] ^= 0x01
    path.write_bytes(bytes(record))
    with pytest.raises(ValueError, match="CRC mismatch"):
        list(tfrecord.read_records(str(path)))


def test_example_encoding_parses_as_tf_train_example():
    table = tfrecord.VarintTable(70000)
    ints = [0, 1, 127, 128, 300, 16383, 16384, 29999, 69999]
    floats = [1.0, 0.0, 0.5]
    serialized = tfrecord.example((
        ("ids", tfrecord.int64_list_feature(table.pack(ints))),
        ("weights", tfrecord.float_list_feature(tf.constant(floats).numpy().tobytes())),
        ("label", tfrecord.int64_list_feature(bytes([1]))),
        ("long", tfrecord.int64_list_feature(table.pack([5] * 200))),
    ))
    parsed = tf.train.Example.FromString(serialized).features.feature
    assert list(parsed["ids"].int64_list.value) == ints
    assert list(parsed["weights"].float_list.value) == floats
    assert list(parsed["label"].int64_list.value) == [1]
    assert list(parsed["long"].int64_list.value) == [5] * 200
    assert set(parsed) == {"ids", "weights", "label", "long"}
