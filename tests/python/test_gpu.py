"""The GPU tier: torch tensors on the device in, torch tensors out (through DLPack, no copy),
against PyTorch. Skipped without PyTorch and a CUDA device."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition
from conftest import cuda_torch, requires_cuda

torch = cuda_torch()


def layer_norm(fd, dtype):
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
    xf = fd.ops.cast(x, DataType.Float)
    var, mean = fd.ops.var_mean(xf, dims=[1], correction=0, keepdim=True)
    y = fd.ops.mul(fd.ops.sub(xf, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
    y = fd.ops.add(fd.ops.mul(y, fd.ops.cast(fd.ops.broadcast_in_dim(w, x.shape(), [1]), DataType.Float)),
                   fd.ops.cast(fd.ops.broadcast_in_dim(b, x.shape(), [1]), DataType.Float))
    fd.add_output(fd.ops.cast(y, dtype))


@requires_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("rows, n", [(64, 1024), (1000, 4096), (3, 16384)])
def test_layer_norm_against_pytorch(dtype, rows, n):
    tdtype = getattr(torch, dtype)
    with FusionDefinition() as fd:
        layer_norm(fd, DataType.Float if dtype == "float32" else DataType.BFloat16)
    x = torch.randn(rows, n, device="cuda", dtype=tdtype)
    w = torch.randn(n, device="cuda", dtype=tdtype)
    b = torch.randn(n, device="cuda", dtype=tdtype)
    (out,) = fd.execute([x, w, b])
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == tdtype
    expected = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    tol = 1e-4 if dtype == "float32" else 2e-2
    torch.testing.assert_close(out.float(), expected, rtol=tol, atol=tol)


@requires_cuda
def test_softmax_from_pytorch_and_a_cache_hit():
    x = torch.randn(256, 2048, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        m = fd.ops.max(t, dims=[1], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(t, fd.ops.broadcast_in_dim(m, t.shape(), [0, 1])))
        s = fd.ops.sum(e, dims=[1], keepdim=True)
        fd.add_output(fd.ops.div(e, fd.ops.broadcast_in_dim(s, t.shape(), [0, 1])))
    for _ in range(3):
        (out,) = fd.execute([x])
        torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    assert fd.counters()["hits"] == 2


@requires_cuda
def test_outputs_are_zero_copy_and_validate_uses_the_reference():
    x = torch.randn(8, 300, device="cuda")
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.gelu(fd.define_tensor(shape=[-1, -1], contiguity=[True, True])))
    (out,) = fd.execute([x])
    assert out.data_ptr() != x.data_ptr() and out.device == x.device
    fd.validate([x])
    np.testing.assert_allclose(out.cpu().numpy(), torch.nn.functional.gelu(x).cpu().numpy(), rtol=1e-5, atol=1e-6)


@requires_cuda
def test_an_aliased_output_updates_the_cuda_tensor_in_place():
    w = torch.randn(4096, device="cuda")
    g = torch.randn(4096, device="cuda")
    expected = w - 0.1 * g
    with FusionDefinition() as fd:
        tw = fd.from_pytorch(w)
        tg = fd.from_pytorch(g)
        fd.add_output(fd.ops.sub(tw, fd.ops.mul(tg, 0.1)), alias_input=tw)
    assert fd.execute([w, g]) == []
    torch.testing.assert_close(w, expected)


@requires_cuda
def test_in_place_outputs_keep_the_tensors_storage_and_wait_for_other_readers():
    x = torch.randn(1000, 384, device="cuda")
    original = x.clone()
    address = x.data_ptr()
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        e = fd.ops.exp(fd.ops.sub(t, fd.ops.max(t, dims=[1], keepdim=True)))
        fd.add_output(fd.ops.div(e, fd.ops.sum(e, dims=[1], keepdim=True)), alias_input=t)
        fd.add_output(fd.ops.sum(t, dims=[0]))
    (sums,) = fd.execute([x])
    assert x.data_ptr() == address
    expected = torch.softmax(original, dim=1)
    torch.testing.assert_close(x, expected)
    torch.testing.assert_close(sums, original.sum(dim=0), rtol=1e-4, atol=1e-4)


@requires_cuda
def test_torch_scalars_lists_and_host_tensors_mix_with_cuda_tensors():
    x = torch.randn(16, 128, device="cuda")
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        alpha = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t, alpha))
    # A 0-d CPU tensor is a number to a fusion, as in nvFuser.
    (out,) = fd.execute([x, torch.tensor(2.5, dtype=torch.float64)])
    torch.testing.assert_close(out, x * 2.5)
    # Host torch tensors go through the GPU and come back as host torch tensors.
    host = torch.randn(4, 8)
    (back,) = fd.execute([host, 0.5])
    assert isinstance(back, torch.Tensor) and not back.is_cuda
    torch.testing.assert_close(back, host * 0.5)


@requires_cuda
def test_bfloat16_validates_against_the_reference_through_torch():
    x = torch.randn(32, 256, device="cuda", dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.cast(fd.ops.exp(fd.ops.cast(t, DataType.Float)), DataType.BFloat16))
    (out,) = fd.validate([x])
    assert out.dtype == torch.bfloat16
    # The reference evaluator takes torch host tensors (bfloat16 too) and gives torch back.
    (reference,) = fd.evaluate([x.cpu()])
    assert reference.dtype == torch.bfloat16 and not reference.is_cuda
    torch.testing.assert_close(out.cpu(), reference, rtol=2e-2, atol=2e-2)


@requires_cuda
def test_a_wrong_input_is_an_error_and_the_next_run_still_works():
    x = torch.randn(64, device="cuda")
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(fd.define_tensor(shape=[-1], contiguity=[True])))
    torch.testing.assert_close(fd.execute([x])[0], -x)
    with pytest.raises(braze.Error, match="input 0"):
        fd.execute([torch.randn(4, 4, device="cuda")])
    with pytest.raises(TypeError, match="input 0"):
        fd.execute([object()])
    torch.testing.assert_close(fd.execute([x])[0], -x)


@requires_cuda
def test_random_ops_on_the_gpu_match_the_reference():
    x = torch.randn(300, 257, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        seed = fd.define_scalar(dtype=DataType.Int)
        offset = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.add(t, fd.ops.uniform(-1.0, 1.0, t.shape(), rng_seed=seed, rng_offset=offset)))
        fd.add_output(fd.ops.normal(0.0, 2.0, t.shape(), rng_seed=seed, rng_offset=offset))
    for offset in (0, (1 << 33) + 1):
        out = fd.execute([x, 77, offset])
        ref = fd.evaluate([x.cpu().numpy(), 77, offset])
        # float32 uniform is bit-identical; normal's logf/cosf may differ from the host's by an ulp.
        np.testing.assert_array_equal(out[0].cpu().numpy(), np.asarray(ref[0]))
        np.testing.assert_allclose(out[1].cpu().numpy(), np.asarray(ref[1]), rtol=1e-5, atol=1e-5)


@requires_cuda
def test_float8_casts_match_pytorch():
    # Past both ranges (|x| up to ~1000): e4m3fn overflows to NaN, e5m2 keeps finite values.
    x = torch.randn(1000, 37, device="cuda") * 200
    x[0, :4] = torch.tensor([448.0, 464.0, 465.0, float("inf")])
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        for dtype in (DataType.Float8_e4m3fn, DataType.Float8_e5m2):
            fd.add_output(fd.ops.cast(fd.ops.cast(t, dtype), DataType.Float))
    e4, e5 = fd.execute([x])
    torch.testing.assert_close(e4, x.to(torch.float8_e4m3fn).float(), rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(e5, x.to(torch.float8_e5m2).float(), rtol=0, atol=0, equal_nan=True)


@requires_cuda
@pytest.mark.parametrize("dim", [0, 1])
def test_scans_against_pytorch(dim):
    x = torch.randn(300, 129, device="cuda")
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.cumsum(fd.ops.exp(t), dim))
        fd.add_output(fd.ops.cummax(t, dim))
        fd.add_output(fd.ops.cummin(t, dim))
        fd.add_output(fd.ops.cumprod(fd.ops.add(fd.ops.mul(t, 0.01), 1.0), dim))
        for out in fd.ops.cummax_with_indices(fd.ops.round(t), dim):
            fd.add_output(out)
    s, mx, mn, p, rmx, irmx = fd.execute([x])
    torch.testing.assert_close(s, torch.cumsum(torch.exp(x), dim), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(mx, torch.cummax(x, dim).values, rtol=0, atol=0)
    torch.testing.assert_close(mn, torch.cummin(x, dim).values, rtol=0, atol=0)
    torch.testing.assert_close(p, torch.cumprod(x * 0.01 + 1.0, dim), rtol=1e-5, atol=1e-5)
    expected = torch.cummax(torch.round(x), dim)  # rounded: ties, whose last index counts
    torch.testing.assert_close(rmx, expected.values, rtol=0, atol=0)
    torch.testing.assert_close(irmx, expected.indices, rtol=0, atol=0)


@requires_cuda
def test_embedding_and_gather_against_pytorch():
    weight = torch.randn(1000, 256, device="cuda", dtype=torch.bfloat16)
    tokens = torch.randint(0, 1000, (4, 33), device="cuda")
    x = torch.randn(64, 50, device="cuda")
    index = torch.randint(0, 50, (64, 17), device="cuda")
    with FusionDefinition() as fd:
        i = fd.from_pytorch(tokens)
        w = fd.from_pytorch(weight)
        t = fd.from_pytorch(x)
        g = fd.from_pytorch(index)
        fd.add_output(fd.ops.embedding_fwd(i, w, None, None, None, None, None))
        fd.add_output(fd.ops.gather(t, g, 1))
        fd.add_output(fd.ops.index_select(t, fd.ops.select(g, 0, dim=0), dim=1))
    embedded, gathered, selected = fd.execute([tokens, weight, x, index])
    torch.testing.assert_close(embedded, torch.nn.functional.embedding(tokens, weight), rtol=0, atol=0)
    torch.testing.assert_close(gathered, torch.gather(x, 1, index), rtol=0, atol=0)
    torch.testing.assert_close(selected, torch.index_select(x, 1, index[0]), rtol=0, atol=0)


@requires_cuda
def test_stride_order_output_strides_and_segment_set():
    x = torch.randn(6, 7, 8, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.stride_order(fd.ops.exp(t), [0, 1, 2]))
        fd.add_output(fd.ops.neg(fd.ops.segment_set(fd.ops.relu(t))))
    column_major, negated = fd.execute([x])
    assert column_major.stride() == (1, 6, 42)
    torch.testing.assert_close(column_major, torch.exp(x))
    torch.testing.assert_close(negated, -torch.relu(x))


@requires_cuda
def test_scatter_into_a_cache_in_place_matches_torch():
    cache = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16)
    step = torch.randn(2, 4, 1, 64, device="cuda", dtype=torch.bfloat16)
    position = torch.full((2, 4, 1, 64), 77, device="cuda", dtype=torch.int64)
    expected = cache.scatter(2, position, step)
    address = cache.data_ptr()
    with FusionDefinition() as fd:
        c = fd.from_pytorch(cache)
        i = fd.from_pytorch(position)
        s = fd.from_pytorch(step)
        fd.add_output(fd.ops.scatter(c, i, s, 2), alias_input=c)
    assert fd.execute([cache, position, step]) == []
    assert cache.data_ptr() == address
    torch.testing.assert_close(cache, expected, rtol=0, atol=0)

    # Out of place, with distinct positions per row along dim 1.
    x = torch.randn(64, 1000, device="cuda")
    index = torch.stack([torch.randperm(1000, device="cuda")[:37] for _ in range(64)])
    src = torch.randn(64, 37, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        i = fd.from_pytorch(index)
        v = fd.from_pytorch(src)
        fd.add_output(fd.ops.scatter(t, i, v, 1))
    (out,) = fd.execute([x, index, src])
    torch.testing.assert_close(out, x.scatter(1, index, src), rtol=0, atol=0)


@requires_cuda
@pytest.mark.parametrize("case", ["linear_bias_relu", "linear_weight_n_innermost", "matmul",
                                  "matmul_batched", "attention_scores", "linear_odd_k",
                                  "matmul_sliced_columns"])
def test_matmul_and_linear_against_pytorch(case):
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("braze::matmul's kernel is for sm_90a")
    m, n, k = 300, 520, 264
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(m, k, **bf16)
    if case == "linear_bias_relu":
        w, b = torch.randn(n, k, **bf16), torch.randn(n, **bf16)
        inputs = [x, w, b]
        expected = torch.relu(torch.nn.functional.linear(x.float(), w.float(), b.float()))
    elif case == "linear_weight_n_innermost":
        w = torch.randn(k, n, **bf16).t()  # [N, K] with N innermost
        inputs = [x, w]
        expected = torch.nn.functional.linear(x.float(), w.float())
    elif case == "matmul":
        inputs = [x, torch.randn(k, n, **bf16)]
        expected = x.float() @ inputs[1].float()
    elif case == "matmul_batched":
        inputs = [torch.randn(3, m, k, **bf16), torch.randn(3, k, n, **bf16)]
        expected = inputs[0].float() @ inputs[1].float()
    elif case == "attention_scores":
        # [batch, heads, M, K] by keys [heads, N, K] transposed: two batch dims, one broadcast.
        q = torch.randn(2, 4, 100, 64, **bf16)
        keys = torch.randn(4, 136, 64, **bf16).transpose(-1, -2)
        inputs = [q, keys]
        expected = q.float() @ keys.float()
    elif case == "linear_odd_k":
        # K = 263: rows off 16-byte boundaries, copied K-padded before the GEMM.
        inputs = [torch.randn(m, 263, **bf16), torch.randn(n, 263, **bf16)]
        expected = torch.nn.functional.linear(inputs[0].float(), inputs[1].float())
    else:
        # A view of every column but the first: its data starts 2 bytes into the allocation.
        a = torch.randn(m, k + 1, **bf16)[:, 1:]
        inputs = [a, torch.randn(k, n, **bf16)]
        expected = a.float() @ inputs[1].float()
    with FusionDefinition() as fd:
        t = [fd.from_pytorch(i) for i in inputs]
        if case.startswith("linear"):
            y = fd.ops.linear(t[0], t[1], t[2] if len(t) > 2 else None)
            if case == "linear_bias_relu":
                y = fd.ops.relu(y)
        else:
            y = fd.ops.matmul(t[0], t[1])
        fd.add_output(y)
    (out,) = fd.execute(inputs)
    assert isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), expected, rtol=2e-2, atol=2e-1)


@requires_cuda
def test_execute_runs_on_torchs_current_stream():
    # On a side stream (non-blocking: no implicit order with the legacy default stream) the
    # input is written after the GPU sleeps a while, and the output is read right after
    # execute: Braze must run between the two on that stream.
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(t, 2.0))
    values = torch.randn(1 << 20, device="cuda")
    fd.execute([values])  # compiled outside the timed part
    side = torch.cuda.Stream()
    for _ in range(3):
        x = torch.full_like(values, float("nan"))
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)  # tens of milliseconds of GPU time
            x.copy_(values)
            (out,) = fd.execute([x])
            doubled = out * 1.0  # read on the side stream, ordered after Braze's kernel
        side.synchronize()
        torch.testing.assert_close(doubled, values * 2.0)
