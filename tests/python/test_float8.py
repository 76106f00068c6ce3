"""DataType.Float8_e4m3fn and DataType.Float8_e5m2 (nvFuser's names): casts from float32 checked
bit for bit against a NumPy rewrite of PyTorch's non-saturating conversion, decoding back to
float32, arithmetic computed in float32, and the repr. NumPy has no float8: a float8 result on
the host is a uint8 array of its bits."""

import numpy as np
import pytest

from braze import DataType, FusionDefinition
from conftest import check_repro


def to_float8_bits(x, mantissa, bias, overflow_bits, has_infinity):
    """c10's fp8e4m3fn_from_fp32_value / fp8e5m2_from_fp32_value on a float32 array: round to
    nearest even on the bits, subnormals through a float32 addition, NaN (e4m3fn) or infinity
    (e5m2) from ``overflow_bits`` up."""
    shift = 23 - mantissa
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    sign = bits & 0x80000000
    bits = bits ^ sign
    denorm = (127 - bias + shift + 1) << 23
    small = bits.astype(np.uint32).view(np.float32) + np.array([denorm], np.uint32).view(np.float32)[0]
    small_bits = (small.view(np.uint32).astype(np.uint64) - denorm) & 0xFF
    odd = (bits >> shift) & 1
    normal_bits = ((bits + ((bias - 127) % (1 << 32) << 23) + (1 << (shift - 1)) - 1 + odd) & 0xFFFFFFFF) >> shift
    big = np.where(has_infinity & (bits <= 0x7F800000), 0x7F & ~((1 << mantissa) - 1), 0x7F)
    result = np.where(bits >= overflow_bits, big,
                      np.where(bits < ((127 - bias + 1) << 23), small_bits, normal_bits & 0xFF))
    return (result.astype(np.uint64) | (sign >> 24)).astype(np.uint8)


def to_e4m3fn_bits(x):
    return to_float8_bits(x, 3, 7, 1087 << 20, False)


def to_e5m2_bits(x):
    return to_float8_bits(x, 2, 15, 143 << 23, True)


def decode(bits, exponent_bits, mantissa_bits, has_infinity):
    bits = np.asarray(bits, dtype=np.int64)
    bias = (1 << (exponent_bits - 1)) - 1
    exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = bits & ((1 << mantissa_bits) - 1)
    sign = np.where(bits & 0x80, -1.0, 1.0)
    value = np.where(exponent == 0, np.ldexp(mantissa.astype(np.float64), 1 - bias - mantissa_bits),
                     np.ldexp((mantissa + (1 << mantissa_bits)).astype(np.float64), exponent - bias - mantissa_bits))
    top = exponent == (1 << exponent_bits) - 1
    if has_infinity:
        value = np.where(top, np.where(mantissa == 0, np.inf, np.nan), value)
    else:
        value = np.where(top & (mantissa == (1 << mantissa_bits) - 1), np.nan, value)
    return sign * value


FORMATS = {
    "e4m3fn": (DataType.Float8_e4m3fn, to_e4m3fn_bits, lambda b: decode(b, 4, 3, False)),
    "e5m2": (DataType.Float8_e5m2, to_e5m2_bits, lambda b: decode(b, 5, 2, True)),
}


def probes(decoder, rng):
    codes = np.arange(256)
    values = decoder(codes)
    finite = values[np.isfinite(values)]
    ordered = np.unique(finite)
    midpoints = (ordered[:-1] + ordered[1:]) / 2
    random_bits = (rng.integers(0, 1 << 32, 20000, dtype=np.uint64) & 0x807FFFFF) | (
        rng.integers(97, 148, 20000, dtype=np.uint64) << 23)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 480, 57344, 61439, 61440, 65536, 1e30])
    return np.concatenate([finite, midpoints, np.nextafter(midpoints.astype(np.float32), np.float32(np.inf)),
                           random_bits.astype(np.uint32).view(np.float32), special]).astype(np.float32)


def test_the_reference_decodes_known_codes():
    assert decode([0x7E], 4, 3, False)[0] == 448 and np.isnan(decode([0x7F], 4, 3, False)[0])
    assert decode([0x7B], 5, 2, True)[0] == 57344 and decode([0xFC], 5, 2, True)[0] == -np.inf
    assert decode([0x01], 4, 3, False)[0] == 2.0**-9 and decode([0x01], 5, 2, True)[0] == 2.0**-16


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_cast_from_float32_matches_pytorchs_bits_and_decodes_back(name, rng):
    dtype, to_bits, decoder = FORMATS[name]
    x = probes(decoder, rng)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        f8 = fd.ops.cast(t, dtype)
        fd.add_output(f8)
        fd.add_output(fd.ops.cast(f8, DataType.Float))
    bits, back = fd.evaluate([x])
    bits = np.asarray(bits)
    assert bits.dtype == np.uint8
    expected = to_bits(x)
    mismatched = np.nonzero(bits != expected)[0]
    assert mismatched.size == 0, [(float(x[i]), hex(bits[i]), hex(expected[i])) for i in mismatched[:10]]
    np.testing.assert_array_equal(np.asarray(back), decoder(expected).astype(np.float32))
    check_repro(fd, [x[:100]])
    # Scheduled, compiled by NVRTC, and launched where there is a GPU: the same bits.
    executed = fd.execute([x])
    np.testing.assert_array_equal(np.asarray(executed[0]), bits)


def test_overflow_rules():
    x = np.array([448, 464, 465, np.inf, -np.inf, 57344, 61440, -1e9], dtype=np.float32)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.cast(t, DataType.Float8_e4m3fn))
        fd.add_output(fd.ops.cast(t, DataType.Float8_e5m2))
    e4, e5 = (np.asarray(out) for out in fd.evaluate([x]))
    assert [hex(b) for b in e4[:5]] == ["0x7e", "0x7e", "0x7f", "0x7f", "0xff"]  # no infinity: NaN
    assert [hex(b) for b in e5[5:]] == ["0x7b", "0x7c", "0xfc"]  # infinity past the range


def test_arithmetic_computes_in_float32_and_promotes_by_width():
    x = np.array([1.0, 3.0, 0.3], dtype=np.float32)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        a = fd.ops.cast(t, DataType.Float8_e5m2)
        s = fd.ops.add(a, a)
        assert s.dtype == DataType.Float8_e5m2
        fd.add_output(fd.ops.cast(s, DataType.Float))
        wider = fd.ops.add(a, fd.ops.cast(t, DataType.Half))
        assert wider.dtype == DataType.Half
        fd.add_output(wider)
    summed, wide = fd.evaluate([x])
    # 0.3 is stored as 0.3125 in e5m2; the sums are exact.
    np.testing.assert_array_equal(np.asarray(summed), np.array([2.0, 6.0, 0.625], np.float32))
    np.testing.assert_array_equal(np.asarray(wide), np.array([2.0, 6.0, 0.3125 + np.float16(0.3)], np.float16))
