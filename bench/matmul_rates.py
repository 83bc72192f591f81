"""The float32 matmul rate each backend's own library gives at albert-base's shapes, on this machine.

A model's GFLOP/s (bench_backends.py) is bounded by its backend's GEMM: this prints that bound per
library, at the three shapes of an albert-base layer for `--tokens` rows (batch x seq): Q/K/V and
the attention output (H x H), the feed-forward's two (H x 4H, 4H x H). Libraries: PyTorch's
`torch.mm` (what Keras on PyTorch calls), PyTorch's oneDNN linear (`torch._C._nn.mkldnn_linear`, a
different GEMM in the same wheel, for comparison), TensorFlow's `tf.linalg.matmul` and JAX's jitted
`jnp.matmul` (what XLA and TensorFlow's graphs call). A library that is not installed is skipped.
Rounds interleaved; medians.

    python bench/matmul_rates.py                      # 32 x 128 tokens, H 768
    python bench/matmul_rates.py --tokens 256 --rounds 5
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._common import cpu_flags, cpu_model, interleaved_medians, load_average, median  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32 * 128, help="rows of each matmul (batch x seq)")
    parser.add_argument("--hidden", type=int, default=768, help="H (the feed-forward is 4H)")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    for flag in ("tokens", "hidden", "rounds"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag}: expected a positive number, got {getattr(args, flag)}")
    return args


def torch_matmuls(left, right):
    """{library: one matmul run to completion} for PyTorch's two GEMMs."""
    import torch

    a, b = torch.from_numpy(left), torch.from_numpy(right)
    a_onednn, b_transposed_onednn = a.to_mkldnn(), b.t().contiguous().to_mkldnn()
    return {f"torch {torch.__version__} mm": lambda: a @ b,
            f"torch {torch.__version__} oneDNN linear": lambda: torch._C._nn.mkldnn_linear(
                a_onednn, b_transposed_onednn, None)}


def tensorflow_matmuls(left, right):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    a, b = tf.constant(left), tf.constant(right)
    matmul = tf.function(lambda: tf.linalg.matmul(a, b))
    return {f"tensorflow {tf.__version__} matmul": lambda: matmul().numpy()}


def jax_matmuls(left, right):
    import jax
    import jax.numpy as jnp

    a, b = jnp.asarray(left), jnp.asarray(right)
    matmul = jax.jit(jnp.matmul)
    return {f"jax {jax.__version__} matmul": lambda: matmul(a, b).block_until_ready()}


LIBRARIES = {"torch": torch_matmuls, "tensorflow": tensorflow_matmuls, "jax": jax_matmuls}


def main(argv=None):
    args = parse_args(argv)
    import numpy as np

    rng = np.random.default_rng(0)
    h = args.hidden
    shapes = [(h, h), (h, 4 * h), (4 * h, h)]
    cases, flops = {}, {}
    for module, matmuls in LIBRARIES.items():
        for inner, outer in shapes:
            left = rng.standard_normal((args.tokens, inner), dtype=np.float32)
            right = rng.standard_normal((inner, outer), dtype=np.float32)
            try:
                runs = matmuls(left, right)
            except ImportError as error:
                print(f"{module}: not measured ({error})", file=sys.stderr)
                break
            for library, run in runs.items():
                key = (library, f"{args.tokens} x {inner} x {outer}")
                cases[key], flops[key] = run, 2.0 * args.tokens * inner * outer
    print(f"cpu: {cpu_model()} x{os.cpu_count()} ({cpu_flags()}); load {load_average()}; H {h}", flush=True)
    wall, _ = interleaved_medians(cases, args.rounds)
    print(f"load {load_average()} at the end\n\n| library | float32 matmul | GFLOP/s |\n|---|---|---|")
    for key in cases:
        print(f"| {key[0]} | {key[1]} | {flops[key] / median(wall[key]) / 1e9:.4g} |")


if __name__ == "__main__":
    main()
