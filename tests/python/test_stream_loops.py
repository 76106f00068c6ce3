"""Stream-parallel axes from Python: tv.axis(i).parallelize(ParallelType.Stream) on a definition
runs its ops once per slice of that axis (on the CPU here: slice by slice through the reference
evaluator), with the same results as the whole fusion, and the host program says so."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition, ParallelType

from conftest import check_repro, cuda_torch, requires_cuda


def scaled_exp(slices):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.exp(x)
        z = fd.ops.mul(y, 2.0)
        fd.add_output(z)
        for t in (y, z):
            t.split(0, slices, False)
            t.axis(0).parallelize(ParallelType.Stream)
    return fd


def test_a_split_stream_axis_runs_in_slices_and_matches(rng):
    fd = scaled_exp(4)
    x = rng.standard_normal((10, 48)).astype(np.float32)
    (out,) = fd.execute([x])
    np.testing.assert_allclose(out, np.exp(x) * 2.0, rtol=1e-6)
    assert "for loop 0 over T1 axis 0 in 4 slices" in fd.last_host_program(), fd.last_host_program()
    # The definition's repr says how it streams, and rebuilds a fusion that streams alike.
    assert "T1.split(0, 4, False)\n    T1.axis(0).parallelize(ParallelType.Stream)" in repr(fd)
    again = check_repro(fd, [x])
    assert repr(again) == repr(fd)


def test_a_stream_axis_on_a_reduced_axis_is_refused(rng):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(x, dims=[1])
        fd.add_output(s)
        s.axis(1).parallelize(ParallelType.Stream)
    with pytest.raises(braze.Error, match="reduces over it"):
        fd.execute([rng.standard_normal((4, 8)).astype(np.float32)])


def test_transform_like_streams_every_tensor_of_a_softmax(rng):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        e = fd.ops.exp(fd.ops.sub(x, fd.ops.max(x, dims=[1], keepdim=True)))
        y = fd.ops.div(e, fd.ops.sum(e, dims=[1], keepdim=True))
        fd.add_output(y)
        # Slice the output, then give every tensor the same stream axis: one loop.
        y.split(0, 4, False)
        y.axis(0).parallelize(ParallelType.Stream)
        fd.sched.transform_like(y)
        fd.sched.parallelize_like(y)
    x = rng.standard_normal((10, 64)).astype(np.float32)
    (out,) = fd.execute([x])
    expected = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, expected / expected.sum(axis=1, keepdims=True), rtol=1e-5)
    assert repr(check_repro(fd, [x])) == repr(fd)


def test_braze_dump_prints_the_host_program(tmp_path):
    """BRAZE_DUMP=host_ir, read once by the Python layer, prints each new runtime's program."""
    import os
    import subprocess
    import sys

    script = tmp_path / "dump.py"
    script.write_text(
        "import numpy as np\n"
        "from braze import DataType, FusionDefinition\n"
        "with FusionDefinition() as fd:\n"
        "    x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
        "    fd.add_output(fd.ops.neg(x))\n"
        "fd.execute([np.ones(8, dtype=np.float32)])\n"
    )
    env = dict(os.environ, BRAZE_DUMP="host_ir")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "=== host program\n%0 = allocate float32" in done.stderr, done.stderr


@requires_cuda
def test_pinned_cpu_tensors_stream_through_the_gpu_and_replay_as_a_graph():
    """torch CPU tensors in pinned memory: each slice is copied in, computed and copied back on
    the loop's streams; with cuda_graph=True the run is replayed as a CUDA graph whose copies
    follow inputs that move; the results are CPU tensors equal to torch's."""
    torch = cuda_torch()
    fd = scaled_exp(4)
    for cuda_graph in (False, True, True, True):
        x = torch.randn(1000, 256).pin_memory()
        (out,) = fd.execute([x], cuda_graph=cuda_graph)
        assert out.device.type == "cpu"
        torch.testing.assert_close(out, torch.exp(x) * 2.0)
        if cuda_graph:
            out.fill_(float("nan"))  # the graph's own buffer: the next replay rewrites it all
    assert "copy_to_host" in fd.last_host_program(), fd.last_host_program()


@requires_cuda
def test_device_tensors_replay_as_a_graph():
    torch = cuda_torch()
    fd = scaled_exp(4)
    for _ in range(3):
        x = torch.randn(512, 128, device="cuda")
        (out,) = fd.execute([x], cuda_graph=True)
        torch.testing.assert_close(out, torch.exp(x) * 2.0)
