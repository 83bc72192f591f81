"""bench/matmul_rates.py keeps working: every installed library's GEMM timed at the three shapes,
one table row each, with a positive rate; bad flags are a one-line error."""

import pytest

from glue_test_data import load_bench_script

matmul_rates = load_bench_script("matmul_rates")


def test_times_each_library_at_each_layer_shape(capsys):
    matmul_rates.main(["--tokens", "8", "--hidden", "4", "--rounds", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "GFLOP/s" not in line]
    libraries = {row.split(" | ")[0][2:].rsplit(" ", 1)[0] for row in rows}
    assert {library.split()[0] for library in libraries} == {"torch", "tensorflow", "jax"}
    assert [row.split(" | ")[1] for row in rows[:2]] == ["8 x 4 x 4"] * 2  # torch's two GEMMs, first shape
    assert {row.split(" | ")[1] for row in rows} == {"8 x 4 x 4", "8 x 4 x 16", "8 x 16 x 4"}
    assert len(rows) == 4 * 3 and all(float(row.split(" | ")[2].rstrip(" |")) > 0 for row in rows)


def test_a_bad_flag_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        matmul_rates.main(["--tokens", "0"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("--tokens: expected a positive number, got 0")
