"""The `braze` Python package in a few lines (tools/run-demo.sh runs it from the package pip
installed in the build folder's venv): define an RMS norm with nvFuser's spelling, execute it
(on the GPU with torch tensors where there is one, else NumPy arrays through the reference
evaluator, with the kernel still compiled), check it against NumPy, and print the schedulers
found and the definition as Python."""

import numpy as np

import braze
from braze import DataType, FusionDefinition

print(f"braze {braze.__version__} ({braze.__file__})")
for scheduler in braze.schedulers():
    reason = f": {scheduler['reason']}" if scheduler["reason"] else ""
    print(f"  {scheduler['id']}@{scheduler['version']} rank {scheduler['rank']} "
          f"({scheduler['status']}{reason})")

with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    mean_square = fd.ops.mean(fd.ops.mul(x, x), dims=[1], keepdim=True)
    y = fd.ops.mul(x, fd.ops.rsqrt(fd.ops.add(mean_square, 1e-6)))
    fd.add_output(fd.ops.mul(y, fd.ops.broadcast_in_dim(w, x.shape(), [1])))

rng = np.random.default_rng(0)
xs = rng.standard_normal((8, 1024)).astype(np.float32)
ws = rng.standard_normal(1024).astype(np.float32)
expected = xs / np.sqrt((xs.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * ws

try:
    import torch

    on_gpu = torch.cuda.is_available()
except ImportError:
    on_gpu = False
if on_gpu:
    (out,) = fd.execute([torch.from_numpy(xs).cuda(), torch.from_numpy(ws).cuda()])
    out = out.cpu().numpy()
else:
    (out,) = fd.execute([xs, ws])
print(f"RMS norm of 8 x 1024 ({'GPU' if on_gpu else 'reference evaluator'}): "
      f"max |braze - numpy| = {np.abs(out - expected).max():.3g}")
print(f"ran as: {fd.last_runtime().strip()}")
print(repr(fd))
