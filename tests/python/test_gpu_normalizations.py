"""The normalization suite through fd.execute on the GPU, against PyTorch (autograd for the
backward passes): softmax, layer norm and RMS norm forward and backward, and a row sum, in
float32 and bfloat16, from short rows to rows split over a cluster of CTAs (norm backward at
65536, its weight gradients summed by the whole grid). Skipped without PyTorch and a CUDA
device."""

import pytest

from braze import DataType, FusionDefinition
from conftest import cuda_torch, requires_cuda

torch = cuda_torch()

SHAPES = [(64, 1024), (1000, 4096), (8, 16384), (4, 65536)]
DTYPES = ["float32", "bfloat16"]


def braze_dtype(name):
    return DataType.Float if name == "float32" else DataType.BFloat16


def inputs_like(fd, dtype, *ranks):
    return [
        fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype) for rank in ranks
    ]


def to_float(fd, t):
    return fd.ops.cast(t, DataType.Float)


def along_rows(fd, vector, like):
    """A per-column vector broadcast to every row of ``like``."""
    return fd.ops.broadcast_in_dim(vector, like.shape(), [1])


def along_columns(fd, vector, like):
    """A per-row vector broadcast along every row of ``like``."""
    return fd.ops.broadcast_in_dim(vector, like.shape(), [0])


def softmax_fwd(fd, dtype):
    (x,) = inputs_like(fd, dtype, 2)
    xf = to_float(fd, x)
    e = fd.ops.exp(fd.ops.sub(xf, fd.ops.max(xf, dims=[1], keepdim=True)))
    fd.add_output(fd.ops.cast(fd.ops.div(e, fd.ops.sum(e, dims=[1], keepdim=True)), dtype))


def softmax_bwd(fd, dtype):
    grad, out = inputs_like(fd, dtype, 2, 2)
    g, y = to_float(fd, grad), to_float(fd, out)
    dot = fd.ops.sum(fd.ops.mul(g, y), dims=[1], keepdim=True)
    fd.add_output(fd.ops.cast(fd.ops.mul(y, fd.ops.sub(g, dot)), dtype))


def layer_norm_fwd(fd, dtype):
    x, w, b = inputs_like(fd, dtype, 2, 1, 1)
    xf = to_float(fd, x)
    var, mean = fd.ops.var_mean(xf, dims=[1], correction=0, keepdim=True)
    xhat = fd.ops.mul(fd.ops.sub(xf, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
    y = fd.ops.add(fd.ops.mul(xhat, to_float(fd, along_rows(fd, w, x))),
                   to_float(fd, along_rows(fd, b, x)))
    fd.add_output(fd.ops.cast(y, dtype))


def layer_norm_bwd(fd, dtype):
    grad, x, w = inputs_like(fd, dtype, 2, 2, 1)
    mean, invstd = inputs_like(fd, DataType.Float, 1, 1)
    n = x.size(1)
    g, xf = to_float(fd, grad), to_float(fd, x)
    xhat = fd.ops.mul(fd.ops.sub(xf, along_columns(fd, mean, x)), along_columns(fd, invstd, x))
    gw = fd.ops.mul(g, to_float(fd, along_rows(fd, w, x)))
    sum_gw = fd.ops.sum(gw, dims=[1], keepdim=True)
    sum_gw_xhat = fd.ops.sum(fd.ops.mul(gw, xhat), dims=[1], keepdim=True)
    inner = fd.ops.sub(fd.ops.sub(fd.ops.mul(gw, n), sum_gw), fd.ops.mul(xhat, sum_gw_xhat))
    grad_x = fd.ops.mul(fd.ops.div(along_columns(fd, invstd, x), n), inner)
    fd.add_output(fd.ops.cast(grad_x, dtype))
    fd.add_output(fd.ops.cast(fd.ops.sum(fd.ops.mul(g, xhat), dims=[0]), dtype))
    fd.add_output(fd.ops.cast(fd.ops.sum(g, dims=[0]), dtype))


def rms_norm_fwd(fd, dtype):
    x, w = inputs_like(fd, dtype, 2, 1)
    xf = to_float(fd, x)
    mean_square = fd.ops.mul(fd.ops.sum(fd.ops.mul(xf, xf), dims=[1], keepdim=True),
                             fd.ops.reciprocal(x.size(1)))
    y = fd.ops.mul(fd.ops.mul(xf, fd.ops.rsqrt(fd.ops.add(mean_square, 1e-5))),
                   to_float(fd, along_rows(fd, w, x)))
    fd.add_output(fd.ops.cast(y, dtype))


def rms_norm_bwd(fd, dtype):
    grad, x, w = inputs_like(fd, dtype, 2, 2, 1)
    (rstd,) = inputs_like(fd, DataType.Float, 1)
    n = x.size(1)
    g, xf = to_float(fd, grad), to_float(fd, x)
    xhat = fd.ops.mul(xf, along_columns(fd, rstd, x))
    gw = fd.ops.mul(g, to_float(fd, along_rows(fd, w, x)))
    mean_gw_xhat = fd.ops.div(fd.ops.sum(fd.ops.mul(gw, xhat), dims=[1], keepdim=True), n)
    grad_x = fd.ops.mul(along_columns(fd, rstd, x), fd.ops.sub(gw, fd.ops.mul(xhat, mean_gw_xhat)))
    fd.add_output(fd.ops.cast(grad_x, dtype))
    fd.add_output(fd.ops.cast(fd.ops.sum(fd.ops.mul(g, xhat), dims=[0]), dtype))


def row_sum(fd, dtype):
    (x,) = inputs_like(fd, dtype, 2)
    fd.add_output(fd.ops.cast(fd.ops.sum(to_float(fd, x), dims=[1]), dtype))


def references(name, args):
    """PyTorch's outputs in float32, from the same inputs (autograd for the backward passes)."""
    f = [a.float() for a in args]
    if name == "softmax_fwd":
        return [torch.softmax(f[0], dim=1)]
    if name == "softmax_bwd":
        grad, out = f
        return [out * (grad - (grad * out).sum(1, keepdim=True))]
    if name == "layer_norm_fwd":
        x, w, b = f
        return [torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5)]
    if name == "layer_norm_bwd":
        grad, x, w = f[:3]
        x = x.detach().requires_grad_()
        w = w.detach().requires_grad_()
        b = torch.zeros_like(w, requires_grad=True)
        torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5).backward(grad)
        return [x.grad, w.grad, b.grad]
    if name == "rms_norm_fwd":
        x, w = f
        return [x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-5) * w]
    if name == "rms_norm_bwd":
        grad, x, w = f[:3]
        x = x.detach().requires_grad_()
        w = w.detach().requires_grad_()
        (x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-5) * w).backward(grad)
        return [x.grad, w.grad]
    if name == "row_sum":
        return [f[0].sum(1)]
    raise AssertionError(name)


def make_inputs(name, rows, n, tdtype):
    def randn(*shape):
        return torch.randn(*shape, device="cuda", dtype=tdtype)

    if name in ("softmax_fwd", "row_sum"):
        return [randn(rows, n)]
    if name == "softmax_bwd":
        return [randn(rows, n), torch.softmax(randn(rows, n).float(), 1).to(tdtype)]
    if name == "layer_norm_fwd":
        return [randn(rows, n), randn(n), randn(n)]
    if name == "rms_norm_fwd":
        return [randn(rows, n), randn(n)]
    x = randn(rows, n)
    xf = x.float()
    if name == "layer_norm_bwd":
        var, mean = torch.var_mean(xf, dim=1, correction=0)
        return [randn(rows, n), x, randn(n), mean, torch.rsqrt(var + 1e-5)]
    if name == "rms_norm_bwd":
        return [randn(rows, n), x, randn(n), torch.rsqrt((xf * xf).mean(1) + 1e-5)]
    raise AssertionError(name)


CASES = {
    "softmax_fwd": softmax_fwd,
    "softmax_bwd": softmax_bwd,
    "layer_norm_fwd": layer_norm_fwd,
    "layer_norm_bwd": layer_norm_bwd,
    "rms_norm_fwd": rms_norm_fwd,
    "rms_norm_bwd": rms_norm_bwd,
    "row_sum": row_sum,
}


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, n", SHAPES)
@pytest.mark.parametrize("name", list(CASES))
def test_normalization_against_pytorch(name, rows, n, dtype):
    tdtype = getattr(torch, dtype)
    with FusionDefinition() as fd:
        CASES[name](fd, braze_dtype(dtype))
    args = make_inputs(name, rows, n, tdtype)
    outputs = fd.execute(args)
    expected = references(name, args)
    assert len(outputs) == len(expected)
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == tdtype, (i, out)
        assert out.shape == ref.shape, (i, out.shape, ref.shape)
        # Relative to the output's scale: column sums over many rows grow with the rows.
        scale = max(1.0, ref.abs().max().item())
        tol = (1e-4 if dtype == "float32" else 2e-2) * scale
        torch.testing.assert_close(out.float(), ref, rtol=0, atol=tol, msg=f"output {i}")
    # The second call is a cache hit and gives the same results for fresh inputs.
    again = make_inputs(name, rows, n, tdtype)
    for out, ref in zip(fd.execute(again), references(name, again)):
        scale = max(1.0, ref.abs().max().item())
        tol = (1e-4 if dtype == "float32" else 2e-2) * scale
        torch.testing.assert_close(out.float(), ref, rtol=0, atol=tol)
    assert fd.counters()["hits"] >= 1
