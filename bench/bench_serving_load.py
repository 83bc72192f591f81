"""Serving under concurrent load: one loaded export beside one ONNX Runtime session, with and without
request batching.

The classifier (random weights, 2 labels) is exported once (`--export_kernels`, float32 or with
`--bf16` mixed_bfloat16) and loaded with `tf.saved_model.load`; its `serve_token_ids` signature is
what the clients call. Beside it, its LiteRT model (`--tflite`, default dynamic-range int8) in a pool
of interpreters as TF Serving's `--prefer_tflite_model` runs it, and one ONNX Runtime session (at its own defaults) of Hugging Face's
ALBERT with the same weights, exported and optimized as `bench_serving.py` does. For every request
length (`--seqs`), client count (`--clients`) and batching off/on, `--requests` requests of
1 x seq (different ids each) are sent by that many client threads in this process, as a model
server's request threads call one loaded model; each client sends its next request when the answer
to its last one came back. No network: what is measured is the model under concurrency.

Reported per case: requests answered, errors, requests/s, p50 and p99 latency (from sending a
request to its answer), the process's RSS at the start, after half the requests were sent and at the
end (flat memory: no growth between the middle and the end), and with batching the mean rows per
model call. The processor and the load average at start and end are printed with the table, which
means anything only on an otherwise idle machine.

Batching: `RequestBatcher` below, configured as TF Serving's `--enable_batching` with a
`--batching_parameters_file` is (`--max_batch_size`, `--batch_timeout_micros`,
`--num_batch_threads`; ragged requests padded to the longest, as `pad_variable_length_inputs: true`).

    python bench/bench_serving_load.py --bf16
    python bench/bench_serving_load.py --config configs/albert_tiny.json --requests 64
"""

import argparse
import collections
import os
import queue
import sys
import threading
import time
from concurrent.futures import Future

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from bench._common import cpu_flags, cpu_model, load_average, onednn_state  # noqa: E402
from bench.bench_serving import SPM_MODEL, export_onnx, ids_batch, ort_inputs, ort_session  # noqa: E402


def rss_mb():
    """This process's resident memory in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def pad_and_concat(requests, pad_value=0):
    """One batch of the requests' rows, every input padded on its last axis to the longest request."""
    longest = {key: max(request[key].shape[-1] for request in requests) for key in requests[0]}
    return {key: np.concatenate([np.pad(request[key], [(0, 0)] * (request[key].ndim - 1)
                                        + [(0, longest[key] - request[key].shape[-1])], constant_values=pad_value)
                                 for request in requests])
            for key in requests[0]}


_STOP = object()  # tells a batch thread to end


class RequestBatcher:
    """Runs concurrent requests as one padded model call, as TF Serving's `--enable_batching` does.

    Hand-written because TensorFlow's Python batcher (`tf.nondifferentiable_batch_function`) only
    joins inputs of one shape; padding ragged requests (`pad_variable_length_inputs`) is TF Serving's
    C++ BatchingSession, which Python cannot call.

    Each of `num_batch_threads` threads takes the oldest waiting request, then adds waiting requests
    until the batch holds `max_batch_size` rows or `batch_timeout_micros` have passed since it took the
    first (a request that would overflow the batch starts the next one), pads the inputs on their last
    axis with `pad_value` to the batch's longest, makes one call of `run` and answers each request with
    its rows of every output. Outputs must be per row ([rows, ...], no sequence axis to unpad).
    TF Serving pads with each input's first element instead (its batching_util.cc), which
    would unmask the padding of `input_mask`; 0 keeps every request's answer what it is alone.
    """

    def __init__(self, run, max_batch_size=16, batch_timeout_micros=1000, num_batch_threads=1, pad_value=0):
        self._run, self._max_rows, self._pad_value = run, max_batch_size, pad_value
        self._timeout = batch_timeout_micros / 1e6
        self._queue = queue.SimpleQueue()
        self.batch_rows = []  # rows of every model call made, in order
        self._threads = [threading.Thread(target=self._serve, daemon=True) for _ in range(num_batch_threads)]
        for thread in self._threads:
            thread.start()

    def __call__(self, inputs):
        """The outputs for `inputs` ({name: [rows, seq] array}); blocks until its batch has run."""
        answer = Future()
        self._queue.put((inputs, answer))
        return answer.result()

    def close(self):
        for _ in self._threads:
            self._queue.put(_STOP)
        for thread in self._threads:
            thread.join()

    def _serve(self):
        carried = None
        while True:
            first = carried if carried is not None else self._queue.get()
            if first is _STOP:
                return
            batch, rows, carried = [first], rows_of(first[0]), None
            deadline = time.monotonic() + self._timeout
            while rows < self._max_rows:
                try:
                    waiting = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if waiting is _STOP or rows + rows_of(waiting[0]) > self._max_rows:
                    carried = waiting  # stop after this batch / the first request of the next one
                    break
                batch.append(waiting)
                rows += rows_of(waiting[0])
            self._run_batch(batch, rows)

    def _run_batch(self, batch, rows):
        self.batch_rows.append(rows)
        try:
            outputs = self._run(pad_and_concat([inputs for inputs, _ in batch], self._pad_value))
        except Exception as error:  # every request of the batch gets the model's error
            for _, answer in batch:
                answer.set_exception(error)
            return
        start = 0
        for inputs, answer in batch:
            end = start + rows_of(inputs)
            answer.set_result({name: value[start:end] for name, value in outputs.items()})
            start = end


def rows_of(inputs):
    return len(next(iter(inputs.values())))


def run_load(serve, requests, clients, time_limit):
    """`clients` threads send `requests` (in order, each taking the next unsent one) to `serve`.

    A client sends its next request when its last one was answered; none is sent after `time_limit`
    seconds. Returns (numbers, answers): the case's numbers and each request's outputs (None if it
    failed or was not sent).
    """
    answers, latencies, errors = [None] * len(requests), [None] * len(requests), []
    next_request, lock = iter(range(len(requests))), threading.Lock()
    rss = {"start": rss_mb(), "middle": None}
    deadline = time.monotonic() + time_limit

    def client():
        while time.monotonic() < deadline:
            with lock:
                index = next(next_request, None)
            if index is None:
                return
            if index == len(requests) // 2:
                rss["middle"] = rss_mb()
            start = time.perf_counter()
            try:
                answers[index] = serve(requests[index])
                latencies[index] = time.perf_counter() - start
            except Exception as error:
                errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    answered = [latency for latency in latencies if latency is not None]
    milliseconds = 1000 * np.array(answered or [np.nan])
    numbers = {"requests": len(answered), "errors": len(errors), "first_error": errors[0] if errors else None,
               "not_sent": len(requests) - len(answered) - len(errors), "seconds": seconds,
               "requests_per_s": len(answered) / seconds, "p50_ms": float(np.percentile(milliseconds, 50)),
               "p99_ms": float(np.percentile(milliseconds, 99)), "rss_mb_start": rss["start"],
               "rss_mb_middle": rss["middle"], "rss_mb_end": rss_mb()}
    return numbers, answers


def make_requests(count, seqs, vocab_size):
    """`count` one-row requests of different ids, their lengths cycling through `seqs`."""
    return [ids_batch(1, seqs[index % len(seqs)], vocab_size, seed=index) for index in range(count)]


def export_serving(config, workdir, kernels, bf16, seed=0):
    """(serve, classifier): `serve` calls the loaded export's `serve_token_ids` on numpy inputs."""
    import tensorflow as tf

    from albert_tf import AlbertClassifier
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier

    tf.keras.utils.set_random_seed(seed)
    classifier = AlbertClassifier(config, num_labels=2)
    path = export_classifier(classifier, get_task("sst-2"), SPM_MODEL, os.path.join(workdir, "export"),
                             max_seq_length=512, version=1, kernels=kernels,
                             dtype="mixed_bfloat16" if bf16 else "float32")
    signature = tf.saved_model.load(path).signatures["serve_token_ids"]

    def serve(inputs):
        return {"logits": signature(**{name: tf.constant(value) for name, value in inputs.items()})["logits"].numpy()}
    return serve, classifier


class FairPool:
    """Items handed to waiting threads oldest first. A queue is not enough: a client that gives an
    interpreter back and asks again at once (holding the GIL) takes it before the woken waiter
    runs, and a few clients starve (queue.Queue: p99 40-60x p50 with 4 and 16 clients)."""

    def __init__(self, items):
        self._lock, self._idle, self._waiters = threading.Lock(), list(items), collections.deque()

    def acquire(self):
        with self._lock:
            if self._idle and not self._waiters:
                return self._idle.pop()
            slot = Future()
            self._waiters.append(slot)
        return slot.result()

    def release(self, item):
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set_result(item)
            else:
                self._idle.append(item)


def litert_serving(classifier, quantization, pools, threads):
    """`serve` on `pools` LiteRT interpreters of the classifier (`tflite_classifier`), as TF Serving's
    `--prefer_tflite_model=true` with `--num_tflite_pools` runs a `model.tflite`: a request takes an
    idle interpreter (or waits for one), each interpreter running `threads` threads."""
    from ai_edge_litert.interpreter import Interpreter

    from albert_tf.serving.serving_tflite import tflite_classifier

    content = tflite_classifier(classifier, quantization)
    pool = FairPool(Interpreter(model_content=content, num_threads=threads).get_signature_runner()
                    for _ in range(pools))

    def serve(inputs):
        runner = pool.acquire()
        try:
            return {"logits": runner(**inputs)["logits"]}
        finally:
            pool.release(runner)
    return serve


def onnx_serving(classifier, workdir):
    """`serve` on one ONNX Runtime session (its own defaults) of HF's ALBERT with the classifier's weights."""
    paths, _ = export_onnx(classifier, workdir, int8=False)
    session = ort_session(paths["ort_fp32"])
    return lambda inputs: {"logits": session.run(["logits"], ort_inputs(inputs))[0]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "albert_base.json"))
    parser.add_argument("--seqs", default="16,128", help="request lengths (each request is 1 x seq)")
    parser.add_argument("--clients", default="1,4,16", help="concurrent client threads, comma-separated")
    parser.add_argument("--requests", type=int, default=256, help="requests per case")
    parser.add_argument("--time_limit", type=float, default=300, help="seconds per case after which no request is sent")
    parser.add_argument("--warmup", type=int, default=4, help="untimed requests per case, one at a time")
    parser.add_argument("--export_kernels", default="cpu_serving", help="the export's kernel set")
    parser.add_argument("--bf16", action="store_true", help="export the mixed_bfloat16 model (AVX-512 BF16 / AMX CPUs)")
    parser.add_argument("--runtimes", default="export,litert,ort",
                        help="which of export, litert, ort to time (one per process keeps their thread pools apart)")
    parser.add_argument("--tflite", default="dynamic_int8", choices=["float32", "dynamic_int8"],
                        help="the LiteRT model's quantization (run_classifier.py --export_serving_tflite)")
    parser.add_argument("--num_tflite_pools", type=int, default=len(os.sched_getaffinity(0)),
                        help="TF Serving's --num_tflite_pools: interpreters answering at once (default: the usable cores)")
    parser.add_argument("--tflite_threads", type=int, default=None,
                        help="threads per interpreter (default: the usable cores shared among the pools)")
    parser.add_argument("--no_batching", action="store_true", help="only without request batching")
    parser.add_argument("--max_batch_size", type=int, default=16, help="TF Serving's max_batch_size: rows per model call")
    parser.add_argument("--batch_timeout_micros", type=int, default=1000,
                        help="TF Serving's batch_timeout_micros: the longest a batch waits for more requests")
    parser.add_argument("--num_batch_threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="TF Serving's num_batch_threads: batches run at once (default: the usable cores)")
    args = parser.parse_args(argv)

    import tempfile

    import tensorflow as tf

    from albert_tf import AlbertConfig

    print(f"cpu: {cpu_model()} [{cpu_flags()}], oneDNN {onednn_state()}, TF {tf.__version__}, "
          f"cores usable: {len(os.sched_getaffinity(0))}, load before: {load_average()}")
    config = AlbertConfig.from_json_file(args.config)
    workdir = tempfile.mkdtemp(prefix="bench_serving_load_")
    chosen = set(args.runtimes.split(","))
    serve_export, classifier = export_serving(config, workdir, args.export_kernels, args.bf16)
    runtimes = {f"export_{args.export_kernels}{'_bf16' if args.bf16 else ''}": serve_export} if "export" in chosen else {}
    if "litert" in chosen:
        threads = args.tflite_threads or max(1, len(os.sched_getaffinity(0)) // args.num_tflite_pools)
        runtimes[f"litert_{args.tflite}"] = litert_serving(classifier, args.tflite, args.num_tflite_pools, threads)
        print(f"LiteRT: {args.num_tflite_pools} interpreter pools of {threads} thread(s)")
    if "ort" in chosen:
        runtimes["ort_fp32"] = onnx_serving(classifier, workdir)
    print(f"batching: max_batch_size {args.max_batch_size}, batch_timeout_micros {args.batch_timeout_micros}, "
          f"num_batch_threads {args.num_batch_threads}, {args.requests} requests per case")

    results = []
    for seq in (int(n) for n in args.seqs.split(",")):
        requests = make_requests(args.requests, [seq], config.vocab_size)
        for runtime, serve in runtimes.items():
            for clients in (int(n) for n in args.clients.split(",")):
                for batching in ([False] if args.no_batching else [False, True]):
                    batcher = RequestBatcher(serve, args.max_batch_size, args.batch_timeout_micros,
                                             args.num_batch_threads) if batching else None
                    for request in requests[:args.warmup]:
                        (batcher or serve)(request)
                    numbers, _ = run_load(batcher or serve, requests, clients, args.time_limit)
                    if batcher:
                        batcher.close()
                        timed_rows = batcher.batch_rows[args.warmup:]
                        numbers["mean_batch_rows"] = sum(timed_rows) / max(1, len(timed_rows))
                    case = {"runtime": runtime, "seq": seq, "clients": clients, "batching": batching, **numbers}
                    results.append(case)
                    print(f"  {runtime:24s} 1x{seq:<4d} clients {clients:3d} batching {'on ' if batching else 'off'}: "
                          f"{case['requests_per_s']:8.1f} req/s  p50 {case['p50_ms']:8.1f} ms  p99 {case['p99_ms']:8.1f} ms  "
                          f"answered {case['requests']}, errors {case['errors']}, not sent {case['not_sent']}  "
                          f"RSS {case['rss_mb_start']:.0f}/{case['rss_mb_middle'] or float('nan'):.0f}/"
                          f"{case['rss_mb_end']:.0f} MB"
                          + (f"  mean batch {case['mean_batch_rows']:.1f} rows" if batching else ""))
    print(f"load after: {load_average()}")
    return results


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # results as they come, in a log too
    main()
