"""Sharded definitions of tensor-parallel MLP pieces, shared by multidevice_benchmark.py (on GPUs
under torchrun) and tests/python/test_multidevice.py (on the simulated mesh, on the CPU): the
definitions the benchmark times are the ones the CPU tier checks against NumPy.

Every function takes a braze.multidevice.DeviceMesh of n devices and returns a
FusionDefinition with global shapes; `split(tv, mesh, axis)` shards a tensor's axis over the
mesh as nvFuser's direct frontend spells it.
"""

from braze import DataType, FusionDefinition, ParallelType

EPS = 1e-6


def split(tv, mesh, axis):
    tv.set_device_mesh(mesh)
    tv.outer_split(axis, mesh.size)
    tv.axis(axis).parallelize(ParallelType.mesh_x)


def _tensor(fd, rank, dtype):
    return fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype)


def _chunked_matmul(mesh, chunks, dtype, lhs_axis, rhs_axis, out_axis):
    """lhs [chunks, M / chunks, K] times rhs [K, N], each split over the mesh along the given
    axis; streamed over the chunks when chunks > 1."""
    with FusionDefinition() as fd:
        lhs, rhs = _tensor(fd, 3, dtype), _tensor(fd, 2, dtype)
        out = fd.ops.matmul(lhs, rhs)
        fd.add_output(out)
        split(lhs, mesh, lhs_axis)
        split(rhs, mesh, rhs_axis)
        split(out, mesh, out_axis)
        if chunks > 1:
            out.axis(0).parallelize(ParallelType.Stream)
    return fd


def ag_gemm(mesh, chunks, dtype=DataType.BFloat16):
    """x [chunks, M / chunks, K] with each chunk's rows split over the mesh (sequence parallel),
    times w [K, N] split by columns: y [chunks, M / chunks, N] with N split. With chunks > 1, y
    is streamed over its chunks, so chunk i + 1's allgather runs beside chunk i's matmul."""
    return _chunked_matmul(mesh, chunks, dtype, lhs_axis=1, rhs_axis=1, out_axis=2)


def gemm_rs(mesh, chunks, dtype=DataType.BFloat16):
    """a [chunks, M / chunks, K] times b [K, N], K split on both (row-parallel): the partial
    sums reduce-scattered by rows, out [chunks, M / chunks, N] with each chunk's rows split;
    streamed over the chunks when chunks > 1."""
    return _chunked_matmul(mesh, chunks, dtype, lhs_axis=2, rhs_axis=0, out_axis=1)


def _rms_norm(fd, x, g, dtype):
    """(x / rms in float32, 1 / rms per row, the normed rows in `dtype`)."""
    xf = fd.ops.cast(x, DataType.Float)
    rstd = fd.ops.rsqrt(fd.ops.add(fd.ops.mean(fd.ops.mul(xf, xf), dims=[1], keepdim=True), EPS))
    xhat = fd.ops.mul(xf, rstd)
    normed = fd.ops.cast(fd.ops.mul(xhat, fd.ops.cast(g, DataType.Float)), dtype)
    return xhat, rstd, normed


def _place(mesh, replicated, column_split, row_split):
    for tv in replicated:
        tv.set_device_mesh(mesh)
    for tv in column_split:
        split(tv, mesh, 1)
    for tv in row_split:
        split(tv, mesh, 0)


def mlp_forward(mesh, dtype=DataType.BFloat16):
    """The block forward, plain tensor parallelism: RMS norm of x [M, H] (replicated), times
    w1 [H, I] split by columns, SiLU, times w2 [I, H] split by rows, the partial sums
    allreduced: y [M, H] on every device. Inputs x, g, w1, w2."""
    with FusionDefinition() as fd:
        x, g, w1, w2 = (_tensor(fd, r, dtype) for r in (2, 1, 2, 2))
        _, _, normed = _rms_norm(fd, x, g, dtype)
        hf = fd.ops.cast(fd.ops.matmul(normed, w1), DataType.Float)
        act = fd.ops.cast(fd.ops.mul(hf, fd.ops.sigmoid(hf)), dtype)
        y = fd.ops.matmul(act, w2)
        fd.add_output(y)
        _place(mesh, [x, g, y], [w1], [w2])
    return fd


def mlp_backward(mesh, dtype=DataType.BFloat16):
    """The block backward for output gradient dy [M, H] (replicated), recomputing the forward:
    outputs dx [M, H] and dg [H] (replicated: the input gradient's partial sums over the split
    intermediate dim are allreduced), dw1 [H, I] split by columns, dw2 [I, H] split by rows.
    Inputs x, g, w1, w2, dy."""
    with FusionDefinition() as fd:
        x, g, w1, w2, dy = (_tensor(fd, r, dtype) for r in (2, 1, 2, 2, 2))
        xhat, rstd, normed = _rms_norm(fd, x, g, dtype)
        hf = fd.ops.cast(fd.ops.matmul(normed, w1), DataType.Float)
        sig = fd.ops.sigmoid(hf)
        act = fd.ops.cast(fd.ops.mul(hf, sig), dtype)
        # Through w2 (row-parallel): local on each device.
        dw2 = fd.ops.matmul(fd.ops.transpose(act, 0, 1), dy)
        dact = fd.ops.cast(fd.ops.matmul(dy, fd.ops.transpose(w2, 0, 1)), DataType.Float)
        # silu'(h) = s (1 + h (1 - s))
        one_minus = fd.ops.sub(1.0, sig)
        dsilu = fd.ops.mul(sig, fd.ops.add(1.0, fd.ops.mul(hf, one_minus)))
        dh = fd.ops.cast(fd.ops.mul(dact, dsilu), dtype)
        # Through w1 (column-parallel): its input gradient sums over the split dim.
        dw1 = fd.ops.matmul(fd.ops.transpose(normed, 0, 1), dh)
        dnormed = fd.ops.cast(fd.ops.matmul(dh, fd.ops.transpose(w1, 0, 1)), DataType.Float)
        # Through the RMS norm: dx = rstd (dxg - xhat mean(dxg xhat)), dg = sum_rows(dn xhat).
        dxg = fd.ops.mul(dnormed, fd.ops.cast(g, DataType.Float))
        proj = fd.ops.mean(fd.ops.mul(dxg, xhat), dims=[1], keepdim=True)
        dx = fd.ops.cast(fd.ops.mul(rstd, fd.ops.sub(dxg, fd.ops.mul(xhat, proj))), dtype)
        dg = fd.ops.cast(fd.ops.sum(fd.ops.mul(dnormed, xhat), dims=[0]), dtype)
        for out in (dx, dg, dw1, dw2):
            fd.add_output(out)
        _place(mesh, [x, g, dy, dx, dg], [w1, dw1], [w2, dw2])
    return fd
