"""Device meshes from Python (braze.multidevice), spelled as nvFuser's direct frontend spells
them: the mesh's layout and refusals; sharded definitions on a simulated mesh (every device a
thread on the CPU), and fd.execute of one, which needs this rank's GPU."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition, ParallelType
from braze.multidevice import DeviceMesh


def test_meshes_of_one_and_two_dims():
    line = DeviceMesh([0, 1, 2, 3])
    assert repr(line) == "mesh{0, 1, 2, 3}"
    assert line.size == 4 and len(line) == 4 and line.shape == [4]
    grid = DeviceMesh([4, 5, 6, 7, 8, 9], shape=[3, 2])
    assert repr(grid) == "mesh[3, 2]{4, 5, 6, 7, 8, 9}"
    assert grid.coordinates_of(7) == [1, 1]
    assert 9 in grid and 0 not in grid
    assert grid == DeviceMesh([4, 5, 6, 7, 8, 9], shape=[3, 2])
    assert grid != DeviceMesh([4, 5, 6, 7, 8, 9], shape=[2, 3])


def test_bad_meshes_are_refused():
    with pytest.raises(braze.Error, match="appears twice"):
        DeviceMesh([0, 1, 1])
    with pytest.raises(braze.Error, match=r"shape \[2, 2\] does not hold the 3 devices"):
        DeviceMesh([0, 1, 2], shape=[2, 2])
    with pytest.raises(braze.Error, match="device 5 is not in mesh"):
        DeviceMesh([0, 1]).coordinates_of(5)


def test_a_sharded_definition_is_refused_by_the_single_device_runtime(rng):
    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.exp(x)
        fd.add_output(y)
        y.set_device_mesh(mesh)
        y.outer_split(1, mesh.size)
        y.axis(1).parallelize(ParallelType.mesh_x)
    # fd.execute takes it to the multi-device runtime; the single-device cache refuses it by name.
    with pytest.raises(braze.Error, match=r"places T1 on mesh\{0, 1\} axis 1 over DIDx"):
        single_device = braze._braze.Executor(fd.fusion())
        single_device.execute([rng.standard_normal((4, 8)).astype(np.float32)], "", 0)


def test_a_device_axis_on_the_wrong_split_is_refused(rng):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.exp(x)
        fd.add_output(y)
        y.set_device_mesh(DeviceMesh([0, 1, 2, 3]))
        y.outer_split(0, 2)
        y.axis(0).parallelize(ParallelType.DIDx)
    with pytest.raises(braze.Error, match="split in exactly 4 parts"):
        fd.execute([rng.standard_normal((4, 8)).astype(np.float32)])


def test_the_repr_of_a_sharded_definition_rebuilds_it():
    from conftest import check_repro

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.exp(x)
        fd.add_output(y)
        x.set_device_mesh(DeviceMesh([0, 1, 2, 3, 4, 5], shape=[3, 2]))  # replicated
        y.set_device_mesh(DeviceMesh([0, 1, 2, 3, 4, 5], shape=[3, 2]))
        y.outer_split(1, 2)
        y.axis(1).parallelize(ParallelType.mesh_x)
        y.outer_split(0, 3)
        y.axis(0).parallelize(ParallelType.mesh_y)
    text = repr(fd)
    assert "T0.set_device_mesh(DeviceMesh([0, 1, 2, 3, 4, 5], shape=[3, 2]))\n" in text, text
    assert (
        "    T1.outer_split(1, 2)\n"
        "    T1.outer_split(0, 3)\n"
        "    T1.axis(0).parallelize(ParallelType.DIDy)\n"
        "    T1.axis(2).parallelize(ParallelType.DIDx)\n"
    ) in text, text
    again = check_repro(fd)
    assert repr(again) == text


def _split(t, mesh, axis):
    t.set_device_mesh(mesh)
    t.outer_split(axis, mesh.size)
    t.axis(axis).parallelize(ParallelType.mesh_x)


@pytest.mark.parametrize("devices", [2, 4])
def test_simulate_data_parallel_rows_and_their_column_sums(rng, devices):
    mesh = DeviceMesh(list(range(devices)))
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        e = fd.ops.exp(x)
        columns = fd.ops.sum(e, [0])
        fd.add_output(e)
        fd.add_output(columns)
        _split(x, mesh, 0)
    whole = rng.standard_normal((4 * devices, 6)).astype(np.float32)
    outputs = braze.multidevice.simulate(fd, [whole])
    assert sorted(outputs) == list(range(devices))
    rows = whole.shape[0] // devices
    for device, (e_part, columns_part) in outputs.items():
        # e keeps x's rows split; the column sums reduce over them and are allreduced.
        np.testing.assert_allclose(
            e_part, np.exp(whole[device * rows : (device + 1) * rows]), rtol=1e-5
        )
        np.testing.assert_allclose(columns_part, np.exp(whole).sum(0), rtol=1e-5)
    program = braze.multidevice.program(fd)
    assert "communicate segment 1" in program and "wait segment 1" in program, program
    assert "partial sum over DIDx" in program, program


def test_simulate_moves_a_split_from_rows_to_columns(rng):
    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.set(x)
        z = fd.ops.mul(y, 2.0)
        fd.add_output(z)
        _split(x, mesh, 0)
        _split(y, mesh, 1)
    whole = rng.standard_normal((4, 6)).astype(np.float32)
    parts = braze.multidevice.parts(fd, [whole], 1)
    np.testing.assert_array_equal(parts[0], whole[2:])
    outputs = braze.multidevice.simulate(fd, [whole])
    for device in (0, 1):
        np.testing.assert_allclose(outputs[device][0], 2 * whole[:, device * 3 : device * 3 + 3])


def test_simulate_refuses_parts_that_do_not_split_evenly(rng):
    mesh = DeviceMesh([0, 1, 2])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(x))
        _split(x, mesh, 0)
    with pytest.raises(braze.Error, match="T0 axis 0 has 4 elements, split over DIDx of mesh"):
        braze.multidevice.simulate(fd, [rng.standard_normal(4).astype(np.float32)])


def _exp_on_one_device():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(x))
        _split(x, DeviceMesh([0]), 0)
    return fd


def test_execute_of_a_sharded_definition_needs_this_ranks_gpu(rng):
    # Without a GPU the communicator cannot be made: a message, not a crash. With one, NumPy
    # parts are refused in favour of CUDA tensors.
    fd = _exp_on_one_device()
    part = rng.standard_normal(4).astype(np.float32)
    with pytest.raises(braze.Error, match="cannot join the NCCL communicator|in host memory"):
        fd.execute([part])


def test_simulate_a_two_by_two_mesh(rng):
    # Rows over the mesh's first dim (mesh_y), columns over its last (mesh_x); the row sums
    # reduce over the split columns: an allreduce among the two devices of each mesh row.
    mesh = DeviceMesh([0, 1, 2, 3], shape=[2, 2])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.mul(x, 3.0)
        rows = fd.ops.sum(y, [1])
        fd.add_output(y)
        fd.add_output(rows)
        x.set_device_mesh(mesh)
        x.outer_split(1, 2)
        x.axis(1).parallelize(ParallelType.mesh_x)
        x.outer_split(0, 2)
        x.axis(0).parallelize(ParallelType.mesh_y)
    whole = rng.standard_normal((4, 6)).astype(np.float32)
    outputs = braze.multidevice.simulate(fd, [whole])
    for device, (y_part, rows_part) in outputs.items():
        r, c = mesh.coordinates_of(device)
        np.testing.assert_allclose(y_part, 3 * whole[2 * r : 2 * r + 2, 3 * c : 3 * c + 3])
        np.testing.assert_allclose(rows_part, 3 * whole[2 * r : 2 * r + 2].sum(1), rtol=1e-5)


def test_simulate_pipelines_an_allgather_over_stream_chunks(rng):
    # x: [chunks, rows split over mesh_x, K]; y (replicated) is streamed over the chunks, so
    # each chunk's allgather runs in the stream loop beside another chunk's compute.
    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        x = fd.define_tensor(
            shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float
        )
        e = fd.ops.exp(x)
        y = fd.ops.mul(e, e)
        fd.add_output(y)
        _split(x, mesh, 1)
        y.set_device_mesh(mesh)
        y.axis(0).parallelize(ParallelType.Stream)
    program = braze.multidevice.program(fd)
    assert "\n  communicate segment 1" in program, program  # inside the loop
    whole = rng.standard_normal((3, 4, 5)).astype(np.float32)
    outputs = braze.multidevice.simulate(fd, [whole])
    for device in (0, 1):
        np.testing.assert_allclose(outputs[device][0], np.exp(whole) ** 2, rtol=1e-5)


def test_the_repr_of_a_tensor_both_sharded_and_streamed_rebuilds_it():
    from conftest import check_repro

    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        x = fd.define_tensor(
            shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float
        )
        y = fd.ops.mul(fd.ops.exp(x), 2.0)
        fd.add_output(y)
        _split(x, mesh, 1)
        y.set_device_mesh(mesh)
        y.outer_split(0, 3)
        y.axis(0).parallelize(ParallelType.Stream)
        y.outer_split(2, 2)
        y.axis(2).parallelize(ParallelType.mesh_x)
    text = repr(fd)
    # The sharding first (logical axis 1), then the stream split, at loop position 0.
    assert "    T2.outer_split(1, 2)\n    T2.axis(1).parallelize(ParallelType.DIDx)\n" in text, text
    assert "    T2.split(0, 3, False)\n    T2.axis(0).parallelize(ParallelType.Stream)\n" in text
    again = check_repro(fd)
    assert repr(again) == text


class _DictStore:
    """A store as torch.distributed's look from Braze: set and get of bytes."""

    def __init__(self):
        self.values = {}

    def set(self, key, value):
        self.values[key] = bytes(value)

    def get(self, key):
        return self.values[key]


def test_outside_a_launch_there_is_no_torch_store(monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert braze.multidevice._torch_store(1.0) is None


def test_a_python_store_that_never_gets_the_key_is_a_message():
    # Rank 1 of two waits for rank 0's id in a store where nobody puts it: the error names the
    # store, not a KeyError from deep inside.
    from conftest import cuda_torch

    if cuda_torch() is None:
        pytest.skip("makes an NCCL communicator: needs a GPU")
    import os

    env = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with pytest.raises(braze.Error, match="_DictStore|store"):
            braze.multidevice.Communicator(store=_DictStore(), timeout_s=1.0)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_collectives_of_a_one_rank_communicator_through_a_python_store():
    from conftest import cuda_torch

    torch = cuda_torch()
    if torch is None:
        pytest.skip("needs PyTorch with a CUDA device")
    store = _DictStore()
    comm = braze.multidevice.Communicator(store=store, device=0)
    assert store.values, "rank 0 put NCCL's id in the Python store"
    assert (comm.rank, comm.size) == (0, 1)
    x = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    expected = x.clone()
    braze.multidevice.all_reduce(x, comm)
    out = torch.full((1000,), float("nan"), device="cuda", dtype=torch.bfloat16)
    braze.multidevice.all_gather(out, x, comm)
    scattered = torch.full((1000,), float("nan"), device="cuda", dtype=torch.bfloat16)
    braze.multidevice.reduce_scatter(scattered, x, comm)
    comm.wait()
    assert torch.equal(x, expected) and torch.equal(out, expected) and torch.equal(scattered, expected)
    # Copy engines: one rank has no peer, so its allgather is NCCL's copy and none counts.
    assert comm.allgather_transport == "auto"
    comm.allgather_transport = "copy_engines"
    assert comm.allgather_transport == "copy_engines"
    out.fill_(float("nan"))
    braze.multidevice.all_gather(out, x, comm)
    comm.wait()
    assert torch.equal(out, expected) and comm.copy_engines_refusal == ""
    assert comm.copy_engine_allgathers == 0
    comm.allgather_transport = "nccl"
    assert comm.allgather_transport == "nccl"
    with pytest.raises(braze.Error, match="'sm' is not 'auto', 'nccl' or 'copy_engines'"):
        comm.allgather_transport = "sm"
    assert comm.allgather_transport == "nccl"


def _without_a_communicator(monkeypatch):
    monkeypatch.setattr(braze.multidevice, "_communicator", None)
    monkeypatch.setattr(braze.multidevice, "_borrowed_from", None)


def test_borrowing_takes_a_torch_process_group(monkeypatch):
    # Refused with a message on every machine: without PyTorch, or given something else.
    _without_a_communicator(monkeypatch)
    with pytest.raises(braze.Error, match="PyTorch is not installed|not object|no torch.distrib"):
        braze.multidevice.communicator(process_group=object())
    with pytest.raises(ValueError, match="not both"):
        braze.multidevice.communicator(process_group=object(), store_path="/tmp/braze-store")
    assert braze.multidevice._communicator is None


def test_a_destroyed_borrowed_group_is_reported_not_used(monkeypatch):
    # destroy_process_group frees the group's NCCL communicator: fd.execute (which asks for
    # communicator()) must raise instead of calling into it.
    monkeypatch.setattr(braze.multidevice, "_communicator", "the borrowed communicator")
    monkeypatch.setattr(braze.multidevice, "_borrowed_from", "its group")
    monkeypatch.setattr(braze.multidevice, "_group_alive", lambda group: False)
    with pytest.raises(braze.Error, match="borrowed was destroyed"):
        braze.multidevice.communicator()
    assert braze.multidevice._communicator is None


def test_a_borrowed_process_group_runs_execute_and_collectives(monkeypatch, tmp_path):
    # A one-rank NCCL group made eagerly (device_id), its communicator borrowed: fd.execute and
    # Braze's collectives run through it, and the group's own collectives still do after.
    from conftest import cuda_torch

    torch = cuda_torch()
    if torch is None:
        pytest.skip("needs PyTorch with a CUDA device")
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("needs torch.distributed with NCCL")
    if dist.is_initialized():
        pytest.skip("this process has a default process group already")
    _without_a_communicator(monkeypatch)
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    try:
        _run_on_the_borrowed_world(torch, dist)
    finally:
        # Braze lets go first: the group owns the communicator.
        braze.multidevice.release_communicator()
        dist.destroy_process_group()


def _run_on_the_borrowed_world(torch, dist):
    comm = braze.multidevice.communicator(process_group=dist.group.WORLD)
    assert comm.borrowed and (comm.rank, comm.size, comm.device) == (0, 1, 0)
    assert braze.multidevice.communicator() is comm
    assert braze.multidevice.communicator(process_group=dist.group.WORLD) is comm

    x = torch.randn(5000, device="cuda")
    (y,) = _exp_on_one_device().execute([x])
    torch.testing.assert_close(y, torch.exp(x), rtol=1e-5, atol=1e-6)

    summed = torch.full_like(x, float("nan"))
    comm._set_stream(torch.cuda.current_stream().cuda_stream)
    comm._all_reduce(x.data_ptr(), summed.data_ptr(), x.numel(), "float32")
    comm.wait()
    assert torch.equal(summed, x)
    gathered = torch.full_like(x, float("nan"))
    braze.multidevice.all_gather(gathered, x, comm)
    comm.wait()
    assert torch.equal(gathered, x)

    by_torch = torch.full_like(x, float("nan"))
    dist.all_gather_into_tensor(by_torch, x)
    torch.cuda.synchronize()
    assert torch.equal(by_torch, x)


def _tp_definitions():
    import pathlib
    import sys

    folder = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "python"
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    import tp_definitions

    return tp_definitions


def _rms_norm_reference(x, g):
    rstd = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    return x * rstd, rstd, x * rstd * g


@pytest.mark.parametrize("chunks", [1, 2])
def test_the_benchmarks_allgather_and_reduce_scatter_matmuls(rng, chunks):
    # The definitions benchmarks/python/multidevice_benchmark.py times on GPUs, checked on the
    # simulated mesh: each device's parts against NumPy on the whole tensors.
    tp = _tp_definitions()
    mesh = DeviceMesh([0, 1])
    x = rng.uniform(-1, 1, (chunks, 8, 16)).astype(np.float16)
    w = rng.uniform(-1, 1, (16, 12)).astype(np.float16)
    whole = x.astype(np.float32) @ w.astype(np.float32)
    outputs = braze.multidevice.simulate(tp.ag_gemm(mesh, chunks, DataType.Half), [x, w])
    for device in (0, 1):
        np.testing.assert_allclose(outputs[device][0].astype(np.float32),
                                   whole[:, :, 6 * device:6 * device + 6], rtol=2e-2, atol=2e-2)
    outputs = braze.multidevice.simulate(tp.gemm_rs(mesh, chunks, DataType.Half), [x, w])
    for device in (0, 1):
        np.testing.assert_allclose(outputs[device][0].astype(np.float32),
                                   whole[:, 4 * device:4 * device + 4], rtol=2e-2, atol=2e-2)


def test_a_sharded_executor_describes_its_steps_and_regions():
    # Before any run: each step by what it communicates, each region not run yet (after a run
    # on GPUs, its kernels: scheduler, choice and kernel name).
    tp = _tp_definitions()
    fd = tp.mlp_forward(DeviceMesh([0, 1]), DataType.Half)
    described = braze._braze.multidevice.ShardedExecutor(fd._fusion).describe()
    lines = described.splitlines()
    assert lines[0] == "segment 0: compute region" and lines[1] == "  (not run yet)", described
    assert "allreduce sum over DIDx of mesh{0, 1}" in described, described


def test_the_benchmarks_tensor_parallel_mlp_forward_and_backward(rng):
    tp = _tp_definitions()
    mesh = DeviceMesh([0, 1])
    m, h, i = 8, 16, 24
    x = rng.uniform(-1, 1, (m, h)).astype(np.float16)
    g = rng.uniform(0.5, 1.5, (h,)).astype(np.float16)
    w1 = (rng.uniform(-1, 1, (h, i)) / 4).astype(np.float16)
    w2 = (rng.uniform(-1, 1, (i, h)) / 4).astype(np.float16)
    dy = rng.uniform(-1, 1, (m, h)).astype(np.float16)
    f = [t.astype(np.float64) for t in (x, g, w1, w2, dy)]
    xf, gf, w1f, w2f, dyf = f
    xhat, rstd, normed = _rms_norm_reference(xf, gf)
    hid = normed @ w1f
    sig = 1.0 / (1.0 + np.exp(-hid))
    act = hid * sig
    y = act @ w2f
    outputs = braze.multidevice.simulate(tp.mlp_forward(mesh, DataType.Half), [x, g, w1, w2])
    for device in (0, 1):
        np.testing.assert_allclose(outputs[device][0].astype(np.float64), y, rtol=3e-2, atol=3e-2)

    dw2 = act.T @ dyf
    dh = (dyf @ w2f.T) * sig * (1.0 + hid * (1.0 - sig))
    dw1 = normed.T @ dh
    dnormed = dh @ w1f.T
    dxg = dnormed * gf
    dx = rstd * (dxg - xhat * (dxg * xhat).mean(axis=1, keepdims=True))
    dg = (dnormed * xhat).sum(axis=0)
    outputs = braze.multidevice.simulate(tp.mlp_backward(mesh, DataType.Half), [x, g, w1, w2, dy])
    half = i // 2
    for device in (0, 1):
        got_dx, got_dg, got_dw1, got_dw2 = (o.astype(np.float64) for o in outputs[device])
        np.testing.assert_allclose(got_dx, dx, rtol=5e-2, atol=5e-2)
        np.testing.assert_allclose(got_dg, dg, rtol=5e-2, atol=5e-2)
        np.testing.assert_allclose(got_dw1, dw1[:, half * device:half * (device + 1)],
                                   rtol=5e-2, atol=5e-2)
        np.testing.assert_allclose(got_dw2, dw2[half * device:half * (device + 1)],
                                   rtol=5e-2, atol=5e-2)


def test_simulate_two_pipeline_stages_on_their_own_meshes(rng):
    # Stage one on devices 0 and 1 (w1's columns split), stage two on 2 and 3 (w2's rows
    # split): h moves part for part between the meshes (send / receive). Each device returns
    # the outputs of its own stage and None for the other's.
    first, second = DeviceMesh([0, 1]), DeviceMesh([2, 3])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        w1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        w2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        h = fd.ops.relu(fd.ops.matmul(x, w1))
        y = fd.ops.matmul(h, w2)
        fd.add_output(h)
        fd.add_output(y)
        x.set_device_mesh(first)
        _split(w1, first, 1)
        _split(w2, second, 0)
        y.set_device_mesh(second)
    xs = rng.uniform(-1, 1, (4, 6)).astype(np.float16)
    w1s = rng.uniform(-1, 1, (6, 8)).astype(np.float16)
    w2s = rng.uniform(-1, 1, (8, 3)).astype(np.float16)
    hs = np.maximum(xs.astype(np.float32) @ w1s.astype(np.float32), 0)
    ys = hs @ w2s.astype(np.float32)
    outputs = braze.multidevice.simulate(fd, [xs, w1s, w2s])
    for device in (0, 1):
        got_h, got_y = outputs[device]
        assert got_y is None
        np.testing.assert_allclose(got_h.astype(np.float32), hs[:, 4 * device:4 * device + 4],
                                   rtol=2e-2, atol=2e-2)
    for device in (2, 3):
        got_h, got_y = outputs[device]
        assert got_h is None
        np.testing.assert_allclose(got_y.astype(np.float32), ys, rtol=3e-2, atol=3e-2)
