"""Sharded definitions: device meshes, as nvFuser's direct frontend spells them.

    mesh = braze.multidevice.DeviceMesh([0, 1, 2, 3])
    t.set_device_mesh(mesh)
    t.outer_split(1, mesh.size)
    t.axis(1).parallelize(braze.ParallelType.mesh_x)

A definition keeps global shapes; each device runs its parts. Braze places the tensors left
unplaced, makes every op local and puts the communication (allgather, reduce-scatter,
allreduce, all-to-all, local slices) where shardings change. ``simulate`` runs a sharded
definition on the CPU with every device a thread of this process, to check a sharding without
GPUs:

    outputs = braze.multidevice.simulate(fd, [x, w])   # {device: [its parts of the outputs]}

On GPUs, each process of a launch (torchrun, mpirun, srun: one process per GPU) calls
``fd.execute`` with its parts of the inputs as CUDA tensors and gets its parts of the outputs;
the communication runs over NCCL on the process's ``communicator()``:

    comm = braze.multidevice.communicator()          # rank, size, local_rank, device
    outputs = fd.execute([x_part.cuda(comm.device), w_part.cuda(comm.device)])

A mesh's device ids are the ranks of the launch. ``fd.execute`` returns once the work is
enqueued on torch's current stream of its GPU, as torch's ops do. A watchdog thread bounds
that work: a peer that dies or stalls past the communicator's timeout aborts the
communicator, and the next call raises instead of hanging. ``communicator().wait()`` waits
for the last run's stream.
"""

from braze._braze.multidevice import Communicator, DeviceMesh, SimulatedRun  # noqa: F401

_communicator = None


def _torch_store(timeout_s):
    """torch.distributed's store where this process has one: the default process group's, or
    under torchrun a client of torchrun's own store at MASTER_ADDR:MASTER_PORT (torchrun serves
    that port itself, so Braze's store cannot). None without torch or outside torchrun."""
    import os

    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if dist.is_available() and dist.is_initialized():
        return dist.distributed_c10d._get_default_store()
    if "TORCHELASTIC_RUN_ID" not in os.environ:
        return None
    import datetime

    return dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        int(os.environ["WORLD_SIZE"]),
        is_master=False,
        timeout=datetime.timedelta(seconds=timeout_s),
    )


def communicator(store_path=None, timeout_s=600.0, store=None):
    """This process's communicator, made on first use from the launcher's variables (RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, or Open MPI's and Slurm's). The ranks
    exchange NCCL's id through ``store`` (an object with ``set(key, bytes)`` and ``get(key)``,
    such as a torch.distributed store); else through torch.distributed's default process
    group's store, or torchrun's store, where there is one; else through ``store_path``, a
    folder every rank can reach; else through a TCP store that rank 0 serves at
    MASTER_ADDR:MASTER_PORT. Each rank uses the GPU of its local rank."""
    global _communicator
    if _communicator is None:
        if store is None and store_path is None:
            store = _torch_store(timeout_s)
        _communicator = Communicator(store_path=store_path, timeout_s=timeout_s, store=store)
    return _communicator


def _stream_of(tensor):
    import torch

    return torch.cuda.current_stream(tensor.device).cuda_stream


def all_reduce(tensor, comm=None):
    """Sums ``tensor`` (a CUDA tensor) over every rank, in place, on torch's current stream."""
    comm = comm or communicator()
    comm._set_stream(_stream_of(tensor))
    comm._all_reduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), _dtype_name(tensor))


def all_gather(output, tensor, comm=None):
    """``output`` = every rank's ``tensor`` concatenated in rank order, on torch's current
    stream."""
    comm = comm or communicator()
    assert output.numel() == tensor.numel() * comm.size, "output must hold size() parts"
    comm._set_stream(_stream_of(tensor))
    comm._all_gather(tensor.data_ptr(), output.data_ptr(), tensor.numel(), _dtype_name(tensor))


def reduce_scatter(output, tensor, comm=None):
    """``output`` = block ``rank`` of ``tensor`` summed over every rank, on torch's current
    stream."""
    comm = comm or communicator()
    assert tensor.numel() == output.numel() * comm.size, "tensor must hold size() blocks"
    comm._set_stream(_stream_of(tensor))
    comm._reduce_scatter(tensor.data_ptr(), output.data_ptr(), output.numel(), _dtype_name(tensor))


def _dtype_name(tensor):
    name = str(tensor.dtype).removeprefix("torch.")
    assert tensor.is_contiguous(), "the collectives take contiguous tensors"
    return name


def simulate(fd, inputs):
    """Each device's outputs (its parts) for whole ``inputs`` (NumPy arrays or CPU tensors and
    numbers): the definition run on a simulated mesh of every device of its meshes, each device
    a thread on the reference evaluator, communication on host memory."""
    return SimulatedRun(fd._fusion).simulate(list(inputs))


def parts(fd, inputs, device):
    """Device ``device``'s parts of whole ``inputs``, as ``simulate`` hands them to it."""
    return SimulatedRun(fd._fusion).parts(list(inputs), device)


def program(fd):
    """The host program every device runs (compute regions, communicate, wait), as text."""
    return SimulatedRun(fd._fusion).program()
