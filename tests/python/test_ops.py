"""Every op reachable from fd.ops, defined with nvFuser's spelling and run through
fd.execute (the reference evaluator on a machine without a GPU, kernels with one), against
NumPy."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition
from conftest import check_repro

UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": np.reciprocal,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "sign": np.sign,
}

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "remainder": np.remainder,
}

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}


def run(build, inputs, execute=True):
    """Defines the fusion, then runs it through fd.execute (scheduled and compiled with NVRTC,
    launched where there is a GPU) and the reference evaluator, which must agree; returns the
    executed outputs (or the evaluated ones for ops no scheduler takes yet)."""
    with FusionDefinition() as fd:
        build(fd)
    check_repro(fd, inputs)
    evaluated = fd.evaluate(inputs)
    if not execute:
        return fd, evaluated
    executed = fd.execute(inputs)
    for out, ref in zip(executed, evaluated):
        np.testing.assert_allclose(np.asarray(out, dtype=np.float64), np.asarray(ref, dtype=np.float64),
                                   rtol=1e-5, atol=1e-6)
    return fd, executed


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, rng):
    x = rng.uniform(0.1, 2.0, size=(5, 33)).astype(np.float32)
    if name in ("neg", "abs", "sign", "floor", "ceil", "trunc", "relu", "sin", "tanh"):
        x = x - 1.0
    _, (out,) = run(lambda fd: fd.add_output(getattr(fd.ops, name)(fd.define_tensor(
        shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float))), [x])
    np.testing.assert_allclose(out, UNARY[name](x.astype(np.float64)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_a_python_number(name, rng):
    a = rng.uniform(0.5, 2.0, size=(4, 16)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, size=(4, 16)).astype(np.float32)

    def build(fd):
        ta = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        tb = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        op = getattr(fd.ops, name)
        fd.add_output(op(ta, tb))
        fd.add_output(op(ta, 1.5))

    _, (both, scalar) = run(build, [a, b])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(both, BINARY[name](a64, b64), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(scalar, BINARY[name](a64, 1.5), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_give_bools(name, rng):
    a = rng.integers(0, 4, size=(3, 7)).astype(np.int64)
    _, (out,) = run(lambda fd: fd.add_output(getattr(fd.ops, name)(
        fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int), 2)), [a])
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, COMPARISONS[name](a, 2))


def test_where_clamp_lerp_addcmul_cast_gelu(rng):
    x = rng.standard_normal((6, 10)).astype(np.float32)
    y = rng.standard_normal((6, 10)).astype(np.float32)

    def build(fd):
        tx = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        ty = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.where(fd.ops.gt(tx, 0.0), tx, ty))
        fd.add_output(fd.ops.clamp(tx, -0.5, 0.5))
        fd.add_output(fd.ops.lerp(tx, ty, 0.25))
        fd.add_output(fd.ops.addcmul(tx, tx, ty, value=0.5))
        fd.add_output(fd.ops.cast(tx, DataType.Double))
        fd.add_output(fd.ops.gelu(tx, approximate="tanh"))

    _, (w, c, l, m, d, g) = run(build, [x, y])
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(w, np.where(x > 0, x, y))
    np.testing.assert_allclose(c, np.clip(x, -0.5, 0.5))
    np.testing.assert_allclose(l, x64 + 0.25 * (y64 - x64), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m, x64 + 0.5 * x64 * y64, rtol=1e-6, atol=1e-6)
    assert d.dtype == np.float64
    tanh_gelu = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3)))
    np.testing.assert_allclose(g, tanh_gelu, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(keepdim, rng):
    x = rng.standard_normal((7, 40)).astype(np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.sum(t, dims=[1], keepdim=keepdim))
        fd.add_output(fd.ops.max(t, dims=[0], keepdim=keepdim))
        fd.add_output(fd.ops.min(t, [1], keepdim))
        fd.add_output(fd.ops.mean(t, dims=[1], keepdim=keepdim))
        fd.add_output(fd.ops.sum(t, dims=[1], keepdim=keepdim, dtype=DataType.Double))
        var, mean = fd.ops.var_mean(t, dims=[1], correction=1, keepdim=keepdim)
        fd.add_output(var)
        fd.add_output(mean)

    _, (s, mx, mn, me, sd, var, mean) = run(build, [x])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(s, x64.sum(1, keepdims=keepdim), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mx, x.max(0, keepdims=keepdim))
    np.testing.assert_allclose(mn, x.min(1, keepdims=keepdim))
    np.testing.assert_allclose(me, x64.mean(1, keepdims=keepdim), rtol=1e-5, atol=1e-6)
    assert sd.dtype == np.float64
    np.testing.assert_allclose(var, x64.var(1, ddof=1, keepdims=keepdim), rtol=1e-5)
    np.testing.assert_allclose(mean, x64.mean(1, keepdims=keepdim), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(dim, rng):
    x = rng.uniform(0.5, 1.5, size=(6, 37)).astype(np.float32)
    i = rng.integers(-50, 50, size=(6, 37)).astype(np.int32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        n = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
        fd.add_output(fd.ops.cumsum(t, dim))
        fd.add_output(fd.ops.cumprod(t, dim=dim))
        fd.add_output(fd.ops.cummax(fd.ops.neg(t), dim))
        fd.add_output(fd.ops.cummin(n, dim=dim))
        fd.add_output(fd.ops.cumsum(n, dim))
        fd.add_output(fd.ops.cumsum(n, dim, dtype=DataType.Int32))
        fd.add_output(fd.ops.cumsum(t, dim, DataType.Double))

    _, (s, p, mx, mn, si, si32, sd) = run(build, [x, i])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(s, np.cumsum(x64, axis=dim), rtol=1e-5)
    np.testing.assert_allclose(p, np.cumprod(x64, axis=dim), rtol=1e-5)
    np.testing.assert_array_equal(mx, np.maximum.accumulate(-x, axis=dim))
    np.testing.assert_array_equal(mn, np.minimum.accumulate(i, axis=dim))
    assert si.dtype == np.int64 and si32.dtype == np.int32 and sd.dtype == np.float64
    np.testing.assert_array_equal(si, np.cumsum(i, axis=dim, dtype=np.int64))
    np.testing.assert_array_equal(si32, np.cumsum(i, axis=dim, dtype=np.int32))
    np.testing.assert_allclose(sd, np.cumsum(x64, axis=dim), rtol=1e-12)


def test_scans_with_indices_as_pytorch():
    x = np.array([[3, 1, 3, np.nan, 5, np.nan], [2, 2, 1, 4, 1, 0]], dtype=np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        for values, indices in (fd.ops.cummax_with_indices(t, 1), fd.ops.cummin_with_indices(t, -1)):
            fd.add_output(values)
            fd.add_output(indices)

    _, (mx, imx, mn, imn) = run(build, [x])
    np.testing.assert_array_equal(mx, [[3, 3, 3, np.nan, np.nan, np.nan], [2, 2, 2, 4, 4, 4]])
    np.testing.assert_array_equal(imx, [[0, 0, 2, 3, 3, 3], [0, 1, 1, 3, 3, 3]])
    np.testing.assert_array_equal(mn, [[3, 1, 1, np.nan, np.nan, np.nan], [2, 2, 1, 1, 1, 0]])
    np.testing.assert_array_equal(imn, [[0, 1, 1, 3, 3, 3], [0, 1, 2, 2, 4, 5]])
    assert imx.dtype == np.int64


def test_scans_propagate_nan_and_refuse_bad_dims():
    x = np.array([[1.0, np.nan, 3.0, -1.0]], dtype=np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.cummax(t, 1))
        fd.add_output(fd.ops.cummin(t, 1))

    _, (mx, mn) = run(build, [x])
    np.testing.assert_array_equal(mx, [[1.0, np.nan, np.nan, np.nan]])
    np.testing.assert_array_equal(mn, [[1.0, np.nan, np.nan, np.nan]])
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        with pytest.raises(braze.Error, match="cumsum"):
            fd.ops.cumsum(t, 2)
        with pytest.raises(braze.Error, match="dtype=bool"):
            fd.ops.cumprod(t, 0, dtype=DataType.Bool)


def test_shape_ops(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = rng.standard_normal((4,)).astype(np.float32)

    # Fixed sizes: constant slices are written back as nvFuser writes them (symbolic ones:
    # test_symbolic_slices_round_trip_through_repr).
    def build(fd):
        t = fd.define_tensor(shape=[2, 3, 4], contiguity=[True, True, True])
        u = fd.define_tensor(shape=[4], contiguity=[True])
        fd.add_output(fd.ops.permute(t, dims=[2, 0, 1]))
        fd.add_output(fd.ops.reshape(t, new_shape=[6, 4]))
        fd.add_output(fd.ops.add(t, fd.ops.broadcast_in_dim(u, shape=t.shape(), broadcast_dims=[2])))
        fd.add_output(fd.ops.slice(t, start_indices=[0, 1, 0], end_indices=[2, 3, 4], strides=[1, 1, 2]))
        fd.add_output(fd.ops.pad(t, [1, 2], value=0.5))
        fd.add_output(fd.ops.cat([t, t], dim=1))
        fd.add_output(fd.ops.squeeze(fd.ops.broadcast(u, [True, False]), dims=[0]))

    # Reshape, slice, pad and cat have no scheduler yet: the reference evaluator runs them.
    _, (p, r, b, s, pad, cat, sq) = run(build, [x, v], execute=False)
    np.testing.assert_array_equal(p, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(r, x.reshape(6, 4))
    np.testing.assert_allclose(b, x + v)
    np.testing.assert_array_equal(s, x[0:2, 1:3, 0:4:2])
    np.testing.assert_array_equal(pad, np.pad(x, [(0, 0), (0, 0), (1, 2)], constant_values=0.5))
    np.testing.assert_array_equal(cat, np.concatenate([x, x], axis=1))
    np.testing.assert_array_equal(sq, v)


@pytest.mark.parametrize("start,stop", [(1, 5), (-4, -1), (-100, 100), (5, 2), (0, 3)])
def test_symbolic_slices_round_trip_through_repr(start, stop, rng):
    # Python bounds are normalized at definition time into scalar expressions; repr writes the
    # normalized ones back with manual_normalization, and the rebuilt fusion must be equal.
    x = rng.standard_normal((7, 9)).astype(np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        a = fd.define_scalar(dtype=DataType.Int)
        b = fd.define_scalar(dtype=DataType.Int)
        # Start and stop are scalar inputs, negative ones counting from the end at run time.
        fd.add_output(fd.ops.slice(t, [a, 0], [b, t.size(1)]))
        # A negative constant start on a symbolic size, and a step of 3.
        fd.add_output(fd.ops.slice(t, [-4, 1], [t.size(0), -1], strides=[1, 3]))
        # Steps above 1 with scalar bounds; then a slice of that slice, whose input's sizes are
        # the first slice's counts, and one of those counts read as a value.
        s = fd.ops.slice(t, [1, a], [t.size(0), b], strides=[2, 1])
        u = fd.ops.slice(s, [0, 1], [s.size(0), s.size(1)], strides=[1, 2])
        fd.add_output(u)
        fd.add_output(fd.ops.mul(u, fd.ops.cast(u.size(1), DataType.Float)))

    fd, outputs = run(build, [x, start, stop], execute=False)
    assert "manual_normalization=True" in repr(fd)
    inner = x[1::2, start:stop][:, 1::2]
    expected = [x[start:stop, :], x[-4:, 1:-1:3], inner, inner * inner.shape[1]]
    for out, ref in zip(outputs, expected):
        assert out.shape == ref.shape
        np.testing.assert_array_equal(out, ref)


def test_repr_reads_a_slice_count_used_before_the_slice():
    # The count feeds an op that fusion.exprs() reaches before the slice itself: repr writes
    # the slice first and reads the count back with size(), so the rebuilt fusion shares it.
    x = np.arange(20, dtype=np.float32).reshape(4, 5)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        s = fd.ops.slice(t, [1, 0], [t.size(0), t.size(1)])
        fd.add_output(fd.ops.add(fd.ops.cast(s.size(0), DataType.Float), s))

    _, (out,) = run(build, [x], execute=False)
    np.testing.assert_array_equal(out, x[1:] + 3)


def test_slice_with_manual_normalization(rng):
    x = rng.standard_normal((8, 6)).astype(np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        a = fd.define_scalar(dtype=DataType.Int)
        b = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.slice(t, [a, 0], [b, t.size(1)], strides=[2, 1],
                                   manual_normalization=True))

    fd, (out,) = run(build, [x, 1, 6], execute=False)
    np.testing.assert_array_equal(out, x[1:6:2])
    # The bounds are used as given: no normalization expressions are added.
    assert "where" not in repr(fd) and "minimum" not in repr(fd), repr(fd)

    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[8], contiguity=[True])
        with pytest.raises(braze.Error, match=r"manual_normalization: dim 0 has start -1 and stop 4"):
            fd.ops.slice(t, [-1], [4], manual_normalization=True)
        with pytest.raises(braze.Error, match="stop 9 on a size of 8"):
            fd.ops.slice(t, [0], [9], manual_normalization=True)


def test_factories_and_symbolic_scalars(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t, s))
        fd.add_output(fd.ops.add(t, fd.ops.iota(5, 0, 1, DataType.Float)))

    _, (scaled, shifted) = run(build, [x, 3.0])
    np.testing.assert_allclose(scaled, x * 3.0, rtol=1e-6)
    np.testing.assert_allclose(shifted, x + np.arange(5, dtype=np.float32), rtol=1e-6)


def test_value_methods():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, 4], contiguity=[True, True])
        s = fd.define_scalar(2.5)
        assert t.is_tensor() and not s.is_tensor()
        assert t.ndim() == 2 and len(t.shape()) == 2
        assert t.size(1).constant_value() == 4 and t.size(0).constant_value() is None
        assert s.constant_value() == 2.5
        assert "float32" in repr(t)


def test_every_binding_is_reachable_through_fd_ops():
    with FusionDefinition() as fd:
        for name in dir(braze._braze.ops):
            if not name.startswith("_"):
                assert callable(getattr(fd.ops, name))
        assert fd.ops.bitwise_left_shift is braze._braze.ops.left_shift


def test_indexing_ops(rng):
    x = rng.standard_normal((5, 6)).astype(np.float32)
    rows = np.array([4, 0, -1, 2], dtype=np.int64)
    cols = rng.integers(-6, 6, size=(5, 3)).astype(np.int32)
    grid = rng.integers(-6, 6, size=(2, 3)).astype(np.int64)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        r = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        c = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
        g = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        at = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.index_select(t, r, dim=0))
        fd.add_output(fd.ops.take_along_axis(t, c, dim=1))
        fd.add_output(fd.ops.gather(t, c, 1))
        fd.add_output(fd.ops.select(t, at, dim=1))
        fd.add_output(fd.ops.select(t, -1, dim=0))
        fd.add_output(fd.ops.take(t, g, dim=1))

    # Scheduled as pointwise kernels (compiled with NVRTC; launched where there is a GPU).
    _, (picked, along, gathered, column, last, taken) = run(build, [x, rows, cols, grid, -2])
    np.testing.assert_array_equal(picked, x[rows])
    np.testing.assert_array_equal(along, np.take_along_axis(x, cols.astype(np.int64) % 6, axis=1))
    np.testing.assert_array_equal(gathered, along)
    np.testing.assert_array_equal(column, x[:, -2])
    np.testing.assert_array_equal(last, x[-1])
    np.testing.assert_array_equal(taken, np.take(x, grid, axis=1))


def test_index_out_of_range_is_an_error_in_the_evaluator(rng):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        r = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        fd.add_output(fd.ops.index_select(t, r, dim=0))
    x = rng.standard_normal((3, 2)).astype(np.float32)
    with pytest.raises(braze.Error, match="holds 3 at position 1, which is out of range"):
        fd.evaluate([x, np.array([0, 3], dtype=np.int64)])


def test_embedding_fwd(rng):
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    tokens = rng.integers(-10, 10, size=(2, 3)).astype(np.int64)

    def build(fd):
        i = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.embedding_fwd(i, w, None, None, None, None, None))
        # nvFuser's spelling with the options as scalar inputs (padding_idx, norm_type,
        # scale_grad_by_freq, sparse): they shape the gradient only.
        padding = fd.define_scalar(dtype=DataType.Int)
        norm = fd.define_scalar(dtype=DataType.Float)
        freq = fd.define_scalar(dtype=DataType.Bool)
        sparse = fd.define_scalar(dtype=DataType.Bool)
        fd.add_output(fd.ops.embedding_fwd(i, w, padding, None, norm, freq, sparse))
        fd.add_output(fd.ops.embedding_fwd(fd.ops.select(i, 0, dim=0), w, padding_idx=2))

    _, (out, with_options, row) = run(build, [tokens, weight, -2, 2.0, True, False])
    np.testing.assert_array_equal(out, np.take(weight, tokens, axis=0))
    np.testing.assert_array_equal(with_options, out)
    np.testing.assert_array_equal(row, np.take(weight, tokens[0], axis=0))


def test_embedding_fwd_refuses_max_norm():
    with FusionDefinition() as fd:
        i = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        with pytest.raises(braze.Error, match="max_norm is not supported"):
            fd.ops.embedding_fwd(i, w, None, fd.define_scalar(dtype=DataType.Float))
        with pytest.raises(braze.Error, match="must be 2-D"):
            fd.ops.embedding_fwd(i, i)


def test_segment_set_and_stride_order(rng):
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)

    def build(fd):
        t = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True])
        fd.add_output(fd.ops.neg(fd.ops.segment_set(fd.ops.exp(t))))
        fd.add_output(fd.ops.stride_order(t, stride_order=[0, 1, 2]))
        fd.add_output(fd.ops.stride_order(fd.ops.abs(t), [1, 2, 0]))

    fd, (negated, reversed_layout, mixed) = run(build, [x])
    np.testing.assert_allclose(negated, -np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(reversed_layout, x)
    np.testing.assert_array_equal(mixed, np.abs(x))
    # Dim i's stride is the stride_order[i]-th smallest: [0, 1, 2] is column-major.
    item = x.itemsize
    assert reversed_layout.strides == (item, 3 * item, 15 * item)
    assert mixed.strides == (4 * item, 12 * item, item)
    for evaluated, executed in zip(fd.evaluate([x]), (negated, reversed_layout, mixed)):
        assert evaluated.strides == executed.strides
    with FusionDefinition() as bad:
        with pytest.raises(braze.Error, match=r"\[0, 0, 1\] is not a permutation of 0..2"):
            bad.ops.stride_order(bad.define_tensor(shape=[-1, -1, -1]), [0, 0, 1])


def test_scatter(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    src = rng.standard_normal((2, 4)).astype(np.float32)
    # Distinct positions per row, so that no write depends on the order.
    index = np.array([[4, 0, 2], [1, 3, 0]], dtype=np.int64)

    def build(fd, sizes=(None, None, None)):
        def tensor(size, dtype=DataType.Float):
            return fd.define_tensor(shape=list(size) if size else [-1, -1], contiguity=[True, True],
                                    dtype=dtype)

        t, i, s = tensor(sizes[0]), tensor(sizes[1], DataType.Int), tensor(sizes[2])
        fd.add_output(fd.ops.scatter(t, i, s, 1))

    # Executed as matches over the index (scatter_as_matches.h), checked against the evaluator.
    # An index smaller than the input and src needs its sizes in the definition.
    _, (out,) = run(lambda fd: build(fd, (x.shape, index.shape, src.shape)), [x, index, src])
    expected = x.copy()
    np.put_along_axis(expected[:2], index, src[:, :3], axis=1)
    np.testing.assert_array_equal(out, expected)
    with FusionDefinition() as symbolic:
        build(symbolic)
    with pytest.raises(braze.Error, match="give sizes that differ in the definition"):
        symbolic.execute([x, index, src])
    np.testing.assert_array_equal(symbolic.evaluate([x, index, src])[0], expected)
    # Symbolic sizes that agree run as they are.
    same = rng.integers(0, 5, size=(3, 4))
    values = rng.standard_normal((3, 4)).astype(np.float32)
    (result,) = symbolic.execute([x, same, values])
    for row in range(3):  # repeated positions in a row: the last entry wins
        for position in range(5):
            writers = [k for k in range(4) if same[row, k] == position]
            assert result[row, position] == (values[row, writers[-1]] if writers else x[row, position])
