"""Manual schedules from Python with nvFuser's spelling: a FusionDefinition subclass defines
and schedules, the kernel compiles with NVRTC (no GPU needed), and on a GPU runs against
PyTorch."""

import numpy as np
import pytest

import braze
from braze import DataType, FusionDefinition, ParallelType
from conftest import cuda_torch, requires_cuda


class ScaledExp(FusionDefinition):
    def definition(self):
        self.x = self.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        self.y = self.ops.mul(self.ops.exp(self.x), 2.0)
        self.add_output(self.y)

    def schedule(self):
        self.y.merge(0, 1)
        self.y.split(0, 128)
        self.y.axis(0).parallelize(ParallelType.BIDx)
        self.y.axis(1).parallelize(ParallelType.TIDx)
        self.sched.transform_like(self.y)
        self.sched.parallelize_like(self.y)
        self.sched.inline_most()


def test_a_manual_schedule_compiles_and_keeps_its_meaning(rng):
    fd = ScaledExp()
    kernel = fd.manual_compile("sm_90")
    assert kernel["kernel_name"].startswith("braze_") and kernel["cubin_bytes"] > 0
    assert "threadIdx.x" in kernel["source"] and "blockIdx.x" in kernel["source"]
    schedule = fd.sched.to_string()
    assert "TIDx" in schedule and "BIDx" in schedule
    x = rng.standard_normal((5, 300)).astype(np.float32)
    np.testing.assert_allclose(fd.evaluate([x])[0], np.exp(x.astype(np.float64)) * 2, rtol=1e-6)
    assert fd.y.num_loop_axes() == 2


def test_manual_schedule_errors_name_the_problem():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t, s))
    with pytest.raises(braze.Error, match="split: the value must be a tensor"):
        s.split(0, 4)
    with pytest.raises(braze.Error, match="pos must be -1"):
        fd.sched.parallelize_like(t, pos=1)
    with pytest.raises(braze.Error, match="not an architecture"):
        fd.manual_compile("sm_xx")


@requires_cuda
def test_a_manual_schedule_runs_on_the_gpu():
    torch = cuda_torch()
    fd = ScaledExp()
    x = torch.randn(7, 1000, device="cuda")
    (out,) = fd.manual_execute([x])
    torch.testing.assert_close(out, torch.exp(x) * 2.0)
