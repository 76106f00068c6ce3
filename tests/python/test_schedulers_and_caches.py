"""fd.sched (schedulers by name, with their refusal reasons and params) and braze.LRUCache
(structurally equal definitions share one compiled fusion)."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition


def row_sum():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.mul(t, 2.0), dims=[1]))
    return fd


def test_can_schedule_says_why_not(rng):
    fd = row_sum()
    ok, reason = fd.sched.can_schedule("braze::reduction")
    assert ok and reason == ""
    ok, reason = fd.sched.can_schedule("pointwise")
    assert not ok and "reduction" in reason
    x = rng.standard_normal((8, 512)).astype(np.float32)
    ok, _ = fd.sched.can_schedule("reduction", [x])
    assert ok
    with pytest.raises(braze.Error, match="no_such"):
        fd.sched.can_schedule("no_such")


def test_compatible_schedulers_heuristics_and_schedule(rng):
    fd = row_sum()
    x = rng.standard_normal((8, 512)).astype(np.float32)
    compatible = fd.sched.find_compatible_schedulers([x])
    assert any(name.startswith("braze::reduction@") for name in compatible)
    assert not any(name.startswith("braze::pointwise@") for name in compatible)
    params = fd.sched.compute_heuristics("reduction", [x])
    assert params.scheduler.startswith("braze::reduction@")
    assert isinstance(params.to_bytes(), bytes) and params.to_bytes()
    assert "reduction" in str(params)
    printed = fd.sched.schedule("reduction", [x])
    assert "TIDx" in printed or "threadIdx" in printed or "BIDx" in printed, printed
    with pytest.raises(braze.Error, match="does not take the fusion"):
        fd.sched.compute_heuristics("pointwise", [x])


def test_params_are_edited_by_name_and_scheduled(rng):
    fd = row_sum()
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    params = fd.sched.compute_heuristics("reduction", [x])
    # The fields come from the plugin's own description of its params.
    assert "threads_x" in params.fields() and "unswitch" in params.fields()
    assert params.to_dict()["threads_x"] == params.threads_x
    assert isinstance(params.unswitch, bool)
    original = params.to_bytes()
    params.threads_x = 64
    params.unroll = 2
    assert params.threads_x == 64 and params.unroll == 2
    assert params.to_bytes() != original
    assert "threads_x=64" in str(params), str(params)
    # The edited params drive the schedule: 64 threads along the row.
    printed = fd.sched.schedule(params)
    assert printed != fd.sched.schedule("reduction", [x])
    assert "64" in printed
    # Wrong names and kinds are refused in Python; bad values by the scheduler.
    with pytest.raises(AttributeError, match="no field 'threads'"):
        params.threads = 4
    with pytest.raises(TypeError, match="integer field"):
        params.threads_x = 1.5
    with pytest.raises(TypeError, match="bool field"):
        params.unswitch = 1
    params.threads_x = 0
    with pytest.raises(braze.Error, match="threads_x must be at least 1"):
        fd.sched.schedule(params)
    with pytest.raises(braze.Error, match="threads_x must be at least 1"):
        str(params)


def test_every_shipped_scheduler_describes_its_params(rng):
    pointwise = FusionDefinition()
    with pointwise:
        a = pointwise.define_tensor(shape=[-1, -1], contiguity=[True, True])
        pointwise.add_output(pointwise.ops.relu(a))
    x = rng.standard_normal((32, 256)).astype(np.float32)
    params = pointwise.sched.compute_heuristics("pointwise", [x])
    assert {"vector_width", "threads_per_block", "grid_stride"} <= set(params.fields())
    params.threads_per_block = 2048
    with pytest.raises(braze.Error, match="threads_per_block is 2048, outside"):
        pointwise.sched.schedule(params)

    norm = FusionDefinition()
    with norm:
        t = norm.define_tensor(shape=[-1, -1], contiguity=[True, True])
        m = norm.ops.max(t, dims=[1], keepdim=True)
        e = norm.ops.exp(norm.ops.sub(t, m))
        norm.add_output(norm.ops.div(e, norm.ops.sum(e, dims=[1], keepdim=True)))
    params = norm.sched.compute_heuristics("inner_outer", [x])
    assert {"persistence", "threads_x", "rows_per_block"} <= set(params.fields())
    assert "inner_outer" in str(params)


def test_lru_cache_shares_structurally_equal_definitions(rng):
    cache = braze.LRUCache(max_fusions=2)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    first = cache.cache_compile(row_sum())
    np.testing.assert_allclose(first.execute([x])[0], (x * 2).sum(1), rtol=1e-5)
    second = cache.cache_compile(row_sum())  # rebuilt, structurally equal
    np.testing.assert_allclose(second.execute([x])[0], (x * 2).sum(1), rtol=1e-5)
    assert cache.num_fusions() == 1
    assert cache.counters() == {"hits": 1, "misses": 1, "evictions": 0}
    assert second.counters()["misses"] == 1  # the second definition compiled nothing
    assert "sum" in str(second.fusion())
    with FusionDefinition() as other:
        other.add_output(other.ops.exp(other.define_tensor(shape=[-1], contiguity=[True])))
    cache.cache_compile(other)
    assert cache.num_fusions() == 2


def test_an_nvfuser_style_rms_norm_is_one_inner_outer_kernel(rng):
    # broadcast_in_dim(w, x.shape(), [1]) expands the weights before the multiply; the
    # executor reads the broadcast instead, so the row loop maps through and one kernel runs.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w = fd.define_tensor(shape=[-1], contiguity=[True])
        ms = fd.ops.mean(fd.ops.mul(x, x), dims=[1], keepdim=True)
        y = fd.ops.mul(fd.ops.mul(x, fd.ops.rsqrt(fd.ops.add(ms, 1e-5))),
                       fd.ops.broadcast_in_dim(w, x.shape(), [1]))
        fd.add_output(y)
    xs = rng.standard_normal((8, 1024)).astype(np.float32)
    ws = rng.standard_normal(1024).astype(np.float32)
    (out,) = fd.execute([xs, ws])
    expected = xs / np.sqrt((xs * xs).mean(1, keepdims=True) + 1e-5) * ws
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    segments = fd.last_runtime().splitlines()
    assert len(segments) == 1 and "inner_outer" in segments[0], segments


def nvfuser_style_layer_norm():
    """A layer norm as nvFuser's Python definitions write it: var_mean (a Welford) and weights
    expanded by broadcast_in_dim before the multiply."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w = fd.define_tensor(shape=[-1], contiguity=[True])
        var, mean = fd.ops.var_mean(x, dims=[1], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(x, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
        fd.add_output(fd.ops.mul(y, fd.ops.broadcast_in_dim(w, x.shape(), [1])))
    return fd


def test_an_nvfuser_style_layer_norm_with_var_mean_is_one_inner_outer_kernel(rng):
    # var_mean is a Welford; the executor computes it as two sums where the row is read anyway.
    fd = nvfuser_style_layer_norm()
    xs = rng.standard_normal((16, 2048)).astype(np.float32) * 3 + 1
    ws = rng.standard_normal(2048).astype(np.float32)
    (out,) = fd.execute([xs, ws])
    expected = (xs - xs.mean(1, keepdims=True)) / np.sqrt(xs.var(1, keepdims=True) + 1e-5) * ws
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    segments = fd.last_runtime().splitlines()
    assert len(segments) == 1 and "inner_outer" in segments[0], segments


def test_sched_asks_about_the_fusion_execute_schedules(rng):
    # As defined, this layer norm has a Welford (var_mean) and an expand before the multiply,
    # which inner_outer refuses. fd.execute rewrites both before scheduling
    # (prepareForScheduling) and runs one inner_outer kernel; fd.sched must answer for that
    # rewritten fusion, or it says no to the scheduler execute then picks.
    fd = nvfuser_style_layer_norm()
    xs = rng.standard_normal((16, 2048)).astype(np.float32)
    ws = rng.standard_normal(2048).astype(np.float32)
    fd.execute([xs, ws])
    (segment,) = fd.last_runtime().splitlines()
    assert "braze::inner_outer" in segment, segment

    ok, reason = fd.sched.can_schedule("inner_outer")
    assert ok, reason
    ok, reason = fd.sched.can_schedule("inner_outer", [xs, ws])
    assert ok, reason
    compatible = fd.sched.find_compatible_schedulers([xs, ws])
    assert any(name.startswith("braze::inner_outer@") for name in compatible), compatible
    params = fd.sched.compute_heuristics("inner_outer", [xs, ws])
    assert str(params) in segment, (str(params), segment)
    assert "TIDx" in fd.sched.schedule("inner_outer", [xs, ws])


def test_matmul_params_are_edited_by_name():
    # matmul(a, b) with a column-major (M innermost) and b row-major, in fp16: numpy has it.
    rng = np.random.default_rng(5)
    a = np.asfortranarray((rng.integers(-4, 5, (200, 136)) / 4).astype(np.float16))
    b = (rng.integers(-4, 5, (136, 328)) / 4).astype(np.float16)
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half,
                             stride_order=[0, 1])
        y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        fd.add_output(fd.ops.matmul(x, y))
    ok, reason = fd.sched.can_schedule("matmul", [a, b])
    assert ok, reason
    params = fd.sched.compute_heuristics("matmul", [a, b])
    assert {"tile_n", "stages", "split_k", "cluster_m", "ctas", "tma_store"} <= set(params.fields())
    assert params.tile_m == 128
    params.tile_n = 128
    params.split_k = 2
    params.ctas = 0
    # A split's CTAs gather scattered column groups: C cannot leave through shared memory.
    params.tma_store = 1
    with pytest.raises(braze.Error, match="tma_store = 1 with split_k = 2"):
        fd.sched.schedule(params)
    params.tma_store = 0
    # The heuristics chose a narrower tile with more stages than a 128-wide tile's ring fits.
    with pytest.raises(braze.Error, match="stages needs .* bytes of shared memory"):
        fd.sched.schedule(params)
    params.stages = 6
    assert "split_k=2" in str(params), str(params)
    fd.sched.schedule(params)
    # A split needs one tile per cluster: persistent blocks are refused by the scheduler.
    params.ctas = 132
    with pytest.raises(braze.Error, match="each cluster on one tile"):
        fd.sched.schedule(params)
    out = fd.execute([a, b])[0]
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(np.asarray(out, dtype=np.float32), want, rtol=1e-2, atol=1e-2)
