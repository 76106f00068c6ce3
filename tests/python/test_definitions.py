"""Definitions as nvFuser users write them: layouts (contiguity in memory order, stride_order),
the sizes/strides form, compute_tensor_descriptor; bad inputs give braze.Error and leave the
executor as it was; schedulers by name; the persistent cache from Python."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition


@pytest.mark.parametrize(
    "sizes, strides, contiguity, stride_order",
    [
        ([2, 3, 4], [12, 4, 1], [True, True, True], [2, 1, 0]),
        ([2, 3, 4], [12, 1, 3], [True, True, True], [2, 0, 1]),
        ([2, 1, 3, 1, 4], [12, 4, 4, 4, 1], [True, None, True, None, True], [4, 3, 2, 1, 0]),
        ([4, 8], [16, 1], [False, True], [1, 0]),
        ([4, 8], [1, 4], [True, True], [0, 1]),
    ],
)
def test_compute_tensor_descriptor(sizes, strides, contiguity, stride_order):
    assert braze.compute_tensor_descriptor(sizes, strides) == (contiguity, stride_order)


def test_channels_last_layout_through_stride_order(rng):
    x = np.ascontiguousarray(rng.standard_normal((2, 5, 6, 3)).astype(np.float32)).transpose(0, 3, 1, 2)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True] * 4, stride_order=[3, 0, 2, 1])
        fd.add_output(fd.ops.mul(t, 2.0))
    np.testing.assert_allclose(fd.execute([x])[0], x * 2.0)


def test_sizes_and_strides_form(rng):
    x = rng.standard_normal((6, 4)).astype(np.float32)[:, ::2]  # strides (4, 2) elements
    with FusionDefinition() as fd:
        t = fd.define_tensor(sizes=x.shape, strides=[s // 4 for s in x.strides], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t))
    np.testing.assert_array_equal(fd.execute([x])[0], -x)


def test_a_broadcast_dim_needs_size_one(rng):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[1, -1], contiguity=[None, True])
        fd.add_output(fd.ops.add(t, 1.0))
    np.testing.assert_allclose(fd.execute([np.ones((1, 5), np.float32)])[0], 2.0)
    with pytest.raises(braze.Error, match="broadcast dim and must have size 1"):
        fd.execute([np.ones((3, 5), np.float32)])


def test_bad_inputs_are_errors_and_leave_the_cache_alone(rng):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.exp(t))
    x = rng.standard_normal((3, 4)).astype(np.float32)
    fd.execute([x])
    before = fd.counters()
    with pytest.raises(braze.Error, match="expected rank 2"):
        fd.execute([np.zeros(3, np.float32)])
    with pytest.raises(braze.Error, match="input"):
        fd.execute([x.astype(np.float64)])
    with pytest.raises(braze.Error):
        fd.execute([])
    with pytest.raises(TypeError, match="input 0"):
        fd.execute(["not a tensor"])
    with pytest.raises(braze.Error, match="not contiguous|stride|layout|contiguous"):
        fd.execute([np.asfortranarray(x)])
    after = fd.counters()
    assert after["misses"] == before["misses"] and after["kernels_compiled"] == before["kernels_compiled"]
    np.testing.assert_allclose(fd.execute([x])[0], np.exp(x), rtol=1e-6)


def test_ops_refuse_what_they_cannot_take():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        with pytest.raises(TypeError, match="sum: x must be a tensor"):
            fd.ops.sum(1.0, dims=[0])
        with pytest.raises(braze.Error, match="max: a dtype cannot be given"):
            fd.ops.max(t, dims=[0], dtype=DataType.Double)
        with pytest.raises(AttributeError, match="no such op"):
            fd.ops.not_an_op
        with pytest.raises(braze.Error, match="dtype and rank must agree"):
            fd.add_output(fd.ops.sum(t, dims=[0]), alias_input=t)
        with pytest.raises(AttributeError, match="not a Braze dtype"):
            DataType.ComplexFloat


def test_schedulers_by_name(rng):
    found = {s["id"]: s for s in braze.schedulers()}
    for shipped in ("braze::pointwise", "braze::reduction", "braze::inner_outer", "braze::scan"):
        assert found[shipped]["status"] == "available", found[shipped]["reason"]
    x = rng.standard_normal((4, 256)).astype(np.float32)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.sum(t, dims=[1]))
    np.testing.assert_allclose(fd.execute([x], scheduler="reduction")[0], x.sum(1), rtol=1e-5)
    assert "braze::reduction" in fd.last_runtime()
    with pytest.raises(braze.Error, match="pointwise"):
        fd.execute([x], scheduler="braze::pointwise")
    with pytest.raises(braze.Error, match="no_such_scheduler"):
        fd.execute([x], scheduler="no_such_scheduler")


def test_validate_catches_a_wrong_reference(rng):
    x = rng.standard_normal((3, 8)).astype(np.float32)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.tanh(fd.define_tensor(shape=[-1, -1], contiguity=[True, True])))
    fd.validate([x])
    with pytest.raises(AssertionError, match="output 0"):
        fd.validate([x], reference_outputs=[np.tanh(x) + 1])


def test_the_persistent_cache_serves_the_next_process(tmp_path):
    script = textwrap.dedent(
        """
        import numpy as np, braze
        from braze import FusionDefinition
        braze.use_persistent_cache()
        with FusionDefinition() as fd:
            t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
            fd.add_output(fd.ops.sum(fd.ops.exp(t), dims=[1]))
        x = np.ones((4, 128), np.float32)
        np.testing.assert_allclose(fd.execute([x])[0], np.e * 128, rtol=1e-5)
        c = fd.counters()
        print(c["kernels_compiled"], c["kernels_from_store"], c["runtimes_restored"])
        """
    )
    env = dict(os.environ, BRAZE_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["1", "0", "0"]
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["1", "1", "1"]
    assert braze.cache_directory() is not None


def test_repr_keeps_layouts_and_constants(rng):
    from conftest import check_repro

    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1, 1, -1], contiguity=[True, False, None, True],
                             stride_order=[3, 0, 2, 1])
        s = fd.define_scalar(dtype=DataType.Float)
        c = fd.define_scalar(0.25, dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.mul(t, s), c))
    again = check_repro(fd)
    assert "stride_order=[3, 0, 2, 1]" in repr(fd)
    assert repr(again) == repr(fd)


def test_repro_script_runs_on_its_own(tmp_path, rng):
    x = rng.standard_normal((6, 5)).astype(np.float32).T  # a transposed layout
    with FusionDefinition() as fd:
        t = fd.define_tensor(sizes=x.shape, strides=[s // 4 for s in x.strides])
        fd.add_output(fd.ops.sum(fd.ops.exp(t), dims=[1]))
    fd.execute([x])
    path = tmp_path / "repro.py"
    script = fd.repro([x], path)
    assert "def braze_fusion(fd: FusionDefinition) -> None:" in script
    assert "# last run: segment 0: braze::" in script
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "(5,)" in run.stdout


def test_a_failed_execution_writes_a_repro(rng):
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.exp(fd.define_tensor(shape=[-1, -1], contiguity=[True, True])))
    with pytest.raises(braze.Error, match="A script that repeats this: ") as failure:
        fd.execute([np.zeros(3, np.float32)])
    path = str(failure.value).split("A script that repeats this: ")[1].strip()
    assert os.path.exists(path) and "braze_fusion" in open(path).read()
    os.remove(path)


def test_ir_objects_are_bound_and_print_as_in_cpp():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        u = fd.ops.sum(fd.ops.exp(t), dims=[1], keepdim=True)
        fd.add_output(u)
    fusion = fd.fusion()
    printed = str(fusion)
    exprs = fusion.exprs()
    assert [e.op for e in exprs] == ["exp", "sum", "broadcast"]
    for expr in exprs:
        assert repr(expr) in printed, (repr(expr), printed)
    assert exprs[1].attributes() == {"axes": [1]}
    assert exprs[2].outputs()[0] == u and u.definition().op == "broadcast"
    assert t.definition() is None and exprs[0].inputs() == [t]
    assert [repr(v) for v in fusion.inputs()] == [repr(t)]


def test_an_aliased_output_is_written_into_its_input(rng):
    with FusionDefinition() as fd:
        weight = fd.define_tensor(shape=[-1], contiguity=[True])
        grad = fd.define_tensor(shape=[-1], contiguity=[True])
        updated = fd.ops.sub(weight, fd.ops.mul(grad, 0.5))
        fd.add_output(updated, alias_input=weight)
        fd.add_output(fd.ops.sum(fd.ops.mul(grad, grad), dims=[0]))
    w = rng.standard_normal(64).astype(np.float32)
    g = rng.standard_normal(64).astype(np.float32)
    expected = w - 0.5 * g
    outputs = fd.execute([w, g])
    assert len(outputs) == 1  # the aliased output is not returned
    np.testing.assert_allclose(w, expected, rtol=1e-6)
    np.testing.assert_allclose(outputs[0], (g.astype(np.float64) ** 2).sum(), rtol=1e-5)


def test_a_repro_of_a_gapped_layout_reads_only_its_own_storage(tmp_path):
    x = np.arange(48, dtype=np.float32).reshape(6, 8)[:, ::2]  # strides (8, 2): gaps
    with FusionDefinition() as fd:
        t = fd.define_tensor(sizes=x.shape, strides=[s // 4 for s in x.strides])
        fd.add_output(fd.ops.neg(t))
    fd.execute([x])
    path = tmp_path / "gapped.py"
    assert "standard_normal(47)" in fd.repro([x], path)  # 1 + 5 * 8 + 3 * 2 elements
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert run.returncode == 0 and "(6, 4)" in run.stdout, run.stderr


def test_the_cache_folder_saves_and_loads_its_kernels(tmp_path):
    script = textwrap.dedent(
        """
        import sys, numpy as np, braze
        from braze import FusionDefinition
        braze.cache.enable(sys.argv[1])
        with FusionDefinition() as fd:
            t = fd.define_tensor(shape=[-1], contiguity=[True])
            fd.add_output(fd.ops.mul(fd.ops.sin(t), 3.0))
        np.testing.assert_allclose(fd.execute([np.ones(64, np.float32)])[0], 3 * np.sin(1.0),
                                   rtol=1e-6)
        c = fd.counters()
        print(c["kernels_compiled"], c["kernels_from_store"])
        """
    )
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    run = subprocess.run([sys.executable, "-c", script, str(first_dir)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    entries = braze.cache.entries(first_dir)
    assert len(entries) == 1 and entries[0]["valid"] and entries[0]["arch"].startswith("sm_")
    bundle = tmp_path / "kernels.bzb"
    assert braze.cache.save(bundle, directory=first_dir) == 1
    report = braze.cache.load(bundle, directory=second_dir)
    assert report == {"added": 1, "skipped": 0, "problems": []}
    # A process on the second folder finds the kernel the bundle brought.
    run = subprocess.run([sys.executable, "-c", script, str(second_dir)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "1"]
    # Bad bundles add nothing and say why; clearing empties the folder.
    junk = tmp_path / "junk.bzb"
    junk.write_bytes(b"not a bundle")
    assert braze.cache.load(junk, directory=second_dir)["added"] == 0
    assert braze.cache.load(junk, directory=second_dir)["problems"]
    assert braze.cache.clear(directory=second_dir) >= 1
    assert braze.cache.entries(second_dir) == []


def test_in_place_outputs_write_the_callers_array_and_round_trip_through_repr(rng):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        doubled = fd.ops.mul(x, 2.0)
        fd.add_output(doubled, alias_input=x)
        fd.add_output(fd.ops.sum(x, dims=[1]))  # reads x too: the write waits for it
    assert "alias_input=" in repr(fd)
    a = rng.standard_normal((5, 33)).astype(np.float32)
    original = a.copy()
    address = a.__array_interface__["data"][0]
    (sums,) = fd.execute([a])
    assert a.__array_interface__["data"][0] == address
    np.testing.assert_allclose(a, 2 * original, rtol=1e-6)
    np.testing.assert_allclose(sums, original.sum(axis=1), rtol=1e-5, atol=1e-5)

    rebuilt = FusionDefinition()
    namespace = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), namespace)
    namespace["braze_fusion"](rebuilt)
    b = original.copy()
    rebuilt.execute([b])
    np.testing.assert_allclose(b, 2 * original, rtol=1e-6)

    frozen = original.copy()
    frozen.setflags(write=False)
    with pytest.raises(braze.Error, match="read-only NumPy array"):
        fd.execute([frozen])


def test_an_output_aliased_to_a_strided_input_is_copied_in_after_the_run(rng):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[False, True])
        fd.add_output(fd.ops.neg(x), alias_input=x)
    base = rng.standard_normal((6, 16)).astype(np.float32)
    view = base[::2]  # rows 2 apart: not contiguous at dim 0
    expected = -view.copy()
    assert fd.execute([view]) == []
    np.testing.assert_allclose(view, expected)
