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
    assert params["scheduler"].startswith("braze::reduction@")
    assert isinstance(params["params"], bytes) and params["params"]
    assert "reduction" in params["summary"]
    printed = fd.sched.schedule("reduction", [x])
    assert "TIDx" in printed or "threadIdx" in printed or "BIDx" in printed, printed
    with pytest.raises(braze.Error, match="does not take the fusion"):
        fd.sched.compute_heuristics("pointwise", [x])


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
