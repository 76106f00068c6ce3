"""A tensor-parallel MLP with torchrun: one process per GPU, each holding a column block of the
first weight and a row block of the second, as Megatron-LM splits them. Braze places the
intermediate tensors, runs the first matmul and the SiLU on each rank's columns, the second
matmul on its rows, and adds the partial results over NCCL (one allreduce), all from one
sharded definition.

    torchrun --nproc-per-node 2 examples/python/tensor_parallel_mlp.py [--tokens 4096] [--borrow]

With --borrow, the ranks first make a torch.distributed NCCL process group, and Braze runs on
that group's own NCCL communicator (braze.multidevice.communicator(process_group=...)) instead
of making one of its own.

Each rank checks its output against torch on the whole weights (same seed on every rank) and
prints the host program it ran. Without a GPU, check the same sharding on the CPU instead:
braze.multidevice.simulate(fd, whole_inputs).
"""

import argparse

import torch

import braze
from braze import DataType, FusionDefinition, ParallelType
from braze.multidevice import DeviceMesh

parser = argparse.ArgumentParser()
parser.add_argument("--tokens", type=int, default=4096)
parser.add_argument("--hidden", type=int, default=4096)
parser.add_argument("--intermediate", type=int, default=14336)
parser.add_argument("--borrow", action="store_true",
                    help="run on the NCCL communicator of a torch.distributed process group")
args = parser.parse_args()

if args.borrow:
    import os

    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    comm = braze.multidevice.communicator(process_group=dist.group.WORLD)
else:
    comm = braze.multidevice.communicator()
mesh = DeviceMesh(list(range(comm.size)))


def split(t, axis):
    t.set_device_mesh(mesh)
    t.outer_split(axis, mesh.size)
    t.axis(axis).parallelize(ParallelType.mesh_x)


with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    w1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    w2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    h = fd.ops.matmul(x, w1)
    g = fd.ops.mul(h, fd.ops.sigmoid(h))
    y = fd.ops.matmul(g, w2)
    fd.add_output(y)
    x.set_device_mesh(mesh)  # every rank holds all tokens
    split(w1, 1)  # column-parallel: [hidden, intermediate / n] on each rank
    split(w2, 0)  # row-parallel: [intermediate / n, hidden] on each rank
    y.set_device_mesh(mesh)  # the sum over ranks, on every rank

torch.manual_seed(0)
scale = args.hidden**-0.5
xs = torch.randn(args.tokens, args.hidden, dtype=torch.bfloat16)
w1s = torch.randn(args.hidden, args.intermediate, dtype=torch.bfloat16) * scale
w2s = torch.randn(args.intermediate, args.hidden, dtype=torch.bfloat16) * args.intermediate**-0.5

device = torch.device("cuda", comm.device)
block = args.intermediate // comm.size
columns = slice(comm.rank * block, (comm.rank + 1) * block)
inputs = [xs.to(device), w1s[:, columns].contiguous().to(device), w2s[columns].contiguous().to(device)]
(out,) = fd.execute(inputs)

hs = xs.to(device) @ w1s.to(device)
expected = (hs * torch.sigmoid(hs)) @ w2s.to(device)
error = (out.float() - expected.float()).abs().max().item()
print(f"rank {comm.rank} of {comm.size} ({comm.launcher}, cuda:{comm.device}): "
      f"max |braze - torch| = {error:.3g}")
if comm.rank == 0:
    print(fd._sharded_executor.program())
assert error < 0.05 * expected.abs().max().item(), error
if args.borrow:
    # Braze lets go of the group's communicator first (waiting for its work): the group owns it.
    del comm
    braze.multidevice.release_communicator()
    dist.destroy_process_group()
