"""fd.ops.uniform and fd.ops.normal (nvFuser's spelling): the reference evaluator against a
pure-Python Philox-4x32-10 (itself checked on Random123's known answers), reproducibility by
rng_seed and rng_offset, the range and moments of the values, errors, and the repr."""

import math

import numpy as np
import pytest

from braze import DataType, Error, FusionDefinition
from conftest import check_repro

MASK32 = 0xFFFFFFFF


def philox4x32_10(counter, key):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
        k0 = (k0 + 0x9E3779B9) & MASK32
        k1 = (k1 + 0xBB67AE85) & MASK32
    return c0, c1, c2, c3


def words(seed, offset, index):
    """Braze's counter {index, offset} and key {seed}, each split into 32-bit halves."""
    seed &= (1 << 64) - 1
    offset &= (1 << 64) - 1
    return philox4x32_10((index & MASK32, index >> 32, offset & MASK32, offset >> 32), (seed & MASK32, seed >> 32))


def unit_float(word):
    return (word >> 8) * 2.0**-24


def unit_double(high, low):
    return (((high << 32) | low) >> 11) * 2.0**-53


@pytest.mark.parametrize(
    "counter, key, expected",
    [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((MASK32,) * 4, (MASK32, MASK32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ],
)
def test_the_python_philox_gives_random123s_known_answers(counter, key, expected):
    assert philox4x32_10(counter, key) == expected


def evaluate(op, a, b, shape, dtype=DataType.Float, seed=None, offset=None):
    with FusionDefinition() as fd:
        kwargs = {} if seed is None else {"rng_seed": seed, "rng_offset": offset}
        fd.add_output(getattr(fd.ops, op)(a, b, shape, dtype=dtype, **kwargs))
    return np.asarray(fd.evaluate([])[0])


@pytest.mark.parametrize("seed, offset", [(0, 0), (7, 3), (-1, (1 << 40) + 9)])
def test_uniform_is_philox_of_seed_offset_and_linear_index(seed, offset):
    # Bounds -1 and 3: u * 4 - 1 is exact in float64, so one rounding to float32 is the kernel's.
    out = evaluate("uniform", -1.0, 3.0, [3, 5], seed=seed, offset=offset)
    assert out.dtype == np.float32 and out.shape == (3, 5)
    expected = [np.float32(unit_float(words(seed, offset, k)[0]) * 4.0 - 1.0) for k in range(15)]
    np.testing.assert_array_equal(out.reshape(-1), np.array(expected, dtype=np.float32))
    wide = evaluate("uniform", -1.0, 3.0, [6], dtype=DataType.Double, seed=seed, offset=offset)
    w = [words(seed, offset, k) for k in range(6)]
    np.testing.assert_array_equal(wide, [unit_double(x[0], x[1]) * 4.0 - 1.0 for x in w])


def test_normal_is_box_muller_of_two_philox_words():
    out = evaluate("normal", 0.5, 2.0, [4, 8], seed=3, offset=11)
    expected = []
    for k in range(32):
        w = words(3, 11, k)
        u1 = ((w[0] >> 8) + 1) * 2.0**-24
        u2 = unit_float(w[1])
        expected.append(0.5 + 2.0 * math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2))
    # The evaluator computes in float32 (as the kernel): within a few float32 ulps.
    np.testing.assert_allclose(out.reshape(-1), expected, rtol=1e-5, atol=1e-5)
    wide = evaluate("normal", 0.5, 2.0, [5], dtype=DataType.Double, seed=3, offset=11)
    expected = []
    for k in range(5):
        w = words(3, 11, k)
        u1 = 1.0 - unit_double(w[0], w[1])
        u2 = unit_double(w[2], w[3])
        expected.append(0.5 + 2.0 * math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2))
    np.testing.assert_allclose(wide, expected, rtol=1e-13, atol=1e-13)


def test_same_seed_and_offset_same_values_else_new_ones():
    base = evaluate("uniform", 0.0, 1.0, [1000], seed=5, offset=0)
    np.testing.assert_array_equal(base, evaluate("uniform", 0.0, 1.0, [1000], seed=5, offset=0))
    assert np.mean(base == evaluate("uniform", 0.0, 1.0, [1000], seed=5, offset=1)) < 0.01
    assert np.mean(base == evaluate("uniform", 0.0, 1.0, [1000], seed=6, offset=0)) < 0.01
    # Without rng_seed and rng_offset: seed 0 and offset 0.
    np.testing.assert_array_equal(evaluate("uniform", 0.0, 1.0, [1000]),
                                  evaluate("uniform", 0.0, 1.0, [1000], seed=0, offset=0))


# (bfloat16 has no NumPy dtype for a host result.)
@pytest.mark.parametrize("dtype", [DataType.Float, DataType.Double, DataType.Half])
def test_range_and_moments(dtype):
    n = 200_000
    u = evaluate("uniform", -2.0, 6.0, [n], dtype=dtype, seed=1, offset=2).astype(np.float64)
    if dtype in (DataType.Float, DataType.Double):
        assert u.min() >= -2.0 and u.max() < 6.0
    assert abs(u.mean() - 2.0) < 5 * 8 / math.sqrt(12 * n)
    assert abs(u.std() - 8 / math.sqrt(12)) < 0.02
    g = evaluate("normal", 1.0, 3.0, [n], dtype=dtype, seed=1, offset=2).astype(np.float64)
    assert abs(g.mean() - 1.0) < 5 * 3.0 / math.sqrt(n)
    assert abs(g.std() - 3.0) < 5 * 3.0 / math.sqrt(2 * n) + 0.01


def test_seed_and_offset_as_inputs_with_an_input_tensor(rng):
    x = rng.standard_normal((16, 33)).astype(np.float32)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        seed = fd.define_scalar(dtype=DataType.Int)
        offset = fd.define_scalar(dtype=DataType.Int)
        noise = fd.ops.uniform(0.0, 1.0, t.shape(), rng_seed=seed, rng_offset=offset)
        fd.add_output(fd.ops.add(t, noise))
        fd.add_output(fd.ops.normal(0.0, 1.0, t.shape(), rng_seed=seed, rng_offset=offset))
    check_repro(fd, [x, 4, 9])
    first = fd.evaluate([x, 4, 9])
    expected = [np.float32(unit_float(words(4, 9, k)[0])) for k in range(16 * 33)]
    np.testing.assert_array_equal(np.asarray(first[0]), x + np.array(expected, np.float32).reshape(16, 33))
    again = fd.evaluate([x, 4, 9])
    np.testing.assert_array_equal(np.asarray(first[1]), np.asarray(again[1]))
    moved = fd.evaluate([x, 4, 10])
    assert not np.array_equal(np.asarray(first[1]), np.asarray(moved[1]))
    # Scheduled by the pointwise scheduler and compiled with NVRTC (launched where there is a
    # GPU, else evaluated): the same values.
    executed = fd.execute([x, 4, 9])
    np.testing.assert_allclose(np.asarray(executed[0]), np.asarray(first[0]), rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(executed[1]), np.asarray(first[1]), rtol=1e-5, atol=1e-5)


def test_errors():
    with FusionDefinition() as fd:
        with pytest.raises(Error, match="rng_seed and rng_offset must be given together"):
            fd.ops.uniform(0.0, 1.0, [4], rng_seed=3)
        with pytest.raises(Error, match="not floating"):
            fd.ops.normal(0.0, 1.0, [4], dtype=DataType.Int)
        with pytest.raises(Error, match="greater than maxval"):
            fd.ops.uniform(2.0, 1.0, [4])
        with pytest.raises(Error, match="rng_seed has dtype float64"):
            fd.ops.uniform(0.0, 1.0, [4], rng_seed=1.5, rng_offset=0)


def test_repr_round_trips():
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.uniform(-1.0, 1.0, [3, 4], rng_seed=2, rng_offset=5, dtype=DataType.Half))
        fd.add_output(fd.ops.normal(0.0, 1.0, [6]))
    text = repr(fd)
    assert "fd.ops.uniform(" in text and "rng_offset=" in text and "fd.ops.normal(" in text
    check_repro(fd, [])
