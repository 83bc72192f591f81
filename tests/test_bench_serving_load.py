"""bench/bench_serving_load.py: concurrent clients on one loaded export and one ONNX Runtime session,
with and without request batching; batched answers are the unbatched ones, ragged requests included."""

import numpy as np
import pytest

from glue_test_data import TINY_CONFIG, load_bench_script

CASE_KEYS = {"runtime", "seq", "clients", "batching", "requests", "errors", "first_error", "not_sent", "seconds",
             "requests_per_s", "p50_ms", "p99_ms", "rss_mb_start", "rss_mb_middle", "rss_mb_end"}


@pytest.fixture(scope="module")
def load_bench():
    return load_bench_script("bench_serving_load")


def test_runs_end_to_end_with_1_and_4_clients_with_and_without_batching(load_bench):
    results = load_bench.main(["--config", TINY_CONFIG, "--seqs", "8", "--clients", "1,4", "--requests", "8",
                               "--warmup", "1", "--batch_timeout_micros", "20000"])
    cases = {(case["runtime"], case["clients"], case["batching"]) for case in results}
    assert cases == {(runtime, clients, batching) for runtime in ("export_cpu_serving", "litert_dynamic_int8", "ort_fp32")
                     for clients in (1, 4) for batching in (False, True)}
    for case in results:
        assert set(case) == CASE_KEYS | ({"mean_batch_rows"} if case["batching"] else set())
        assert (case["requests"], case["errors"], case["not_sent"], case["seq"]) == (8, 0, 0, 8)
        assert case["requests_per_s"] > 0 and 0 < case["p50_ms"] <= case["p99_ms"]
        assert min(case["rss_mb_start"], case["rss_mb_middle"], case["rss_mb_end"]) > 0
        if case["batching"]:
            assert 1 <= case["mean_batch_rows"] <= case["clients"]


def test_batched_answers_equal_unbatched_ones_for_ragged_requests_padded_together(load_bench, tmp_path):
    from albert_tf import AlbertConfig

    config = AlbertConfig.from_json_file(TINY_CONFIG)
    serve, _ = load_bench.export_serving(config, str(tmp_path), "reference", bf16=False)
    requests = load_bench.make_requests(12, [5, 9, 16, 12], config.vocab_size)
    alone, alone_answers = load_bench.run_load(serve, requests, clients=1, time_limit=120)
    # A long timeout: every batch waits until its 4 rows (one per client, of different lengths) are there.
    batcher = load_bench.RequestBatcher(serve, max_batch_size=4, batch_timeout_micros=10_000_000)
    batched, batched_answers = load_bench.run_load(batcher, requests, clients=4, time_limit=120)
    batcher.close()
    assert batcher.batch_rows == [4, 4, 4]
    assert alone["errors"] == batched["errors"] == 0 and alone["requests"] == batched["requests"] == 12
    for one, together in zip(alone_answers, batched_answers):
        assert one["logits"].shape == together["logits"].shape == (1, 2)
        np.testing.assert_allclose(together["logits"], one["logits"], atol=1e-5, rtol=0)


def test_ragged_requests_are_padded_with_zeros_to_the_longest(load_bench):
    short, long = load_bench.make_requests(2, [3, 6], vocab_size=100)
    batch = load_bench.pad_and_concat([short, long])
    assert batch["input_word_ids"].shape == batch["input_mask"].shape == (2, 6)
    np.testing.assert_array_equal(batch["input_mask"], [[1, 1, 1, 0, 0, 0], [1] * 6])
    np.testing.assert_array_equal(batch["input_word_ids"][0], list(short["input_word_ids"][0]) + [0, 0, 0])


def test_a_failing_model_is_counted_as_errors_of_every_request_of_its_batch(load_bench):
    def broken(inputs):
        raise ValueError("no model")

    batcher = load_bench.RequestBatcher(broken, max_batch_size=2, batch_timeout_micros=1000)
    numbers, answers = load_bench.run_load(batcher, load_bench.make_requests(6, [4], 100), clients=2, time_limit=60)
    batcher.close()
    assert (numbers["errors"], numbers["requests"], numbers["not_sent"]) == (6, 0, 0)
    assert numbers["first_error"] == "ValueError: no model" and answers == [None] * 6
