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

A program that already has a PyTorch process group can hand Braze that group's NCCL
communicator instead of making another (one less communicator's memory and setup):

    comm = braze.multidevice.communicator(process_group=dist.group.WORLD)

A mesh's device ids are the ranks of the launch (of the group, for a borrowed communicator).
``fd.execute`` returns once the work is enqueued on torch's current stream of its GPU, as
torch's ops do. A watchdog thread bounds that work: a peer that dies or stalls past the
communicator's timeout aborts the communicator, and the next call raises instead of hanging.
``communicator().wait()`` waits for the last run's stream.
"""

from braze._braze import Error
from braze._braze.multidevice import Communicator, DeviceMesh, SimulatedRun  # noqa: F401

_communicator = None
# The process group _communicator was borrowed from, if it was.
_borrowed_from = None


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


def communicator(store_path=None, timeout_s=600.0, store=None, process_group=None):
    """This process's communicator, made on first use from the launcher's variables (RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, or Open MPI's and Slurm's). The ranks
    exchange NCCL's id through ``store`` (an object with ``set(key, bytes)`` and ``get(key)``,
    such as a torch.distributed store); else through torch.distributed's default process
    group's store, or torchrun's store, where there is one; else through ``store_path``, a
    folder every rank can reach; else through a TCP store that rank 0 serves at
    MASTER_ADDR:MASTER_PORT. Each rank uses the GPU of its local rank.

    With ``process_group`` (a torch.distributed NCCL group, such as ``dist.group.WORLD``), this
    process's communicator becomes that group's NCCL communicator, borrowed rather than made:
    ranks are the group's ranks, the device is the group's (``device_id`` of
    init_process_group, else torch's current device). Every rank of the group calls it at the
    same point: where the group has not made its communicator yet, one collective on the group
    makes it. The group keeps owning it: destroy the group only after Braze's last work on it
    is done, and a failure Braze detects (a dead peer, a timeout) leaves the group unusable, as
    an NCCL error of its own would. Braze's collectives and the group's share the communicator
    in the order the program calls them."""
    global _communicator, _borrowed_from
    if process_group is not None:
        if store is not None or store_path is not None:
            raise ValueError("communicator: pass process_group, or a store or store_path to make "
                             "a communicator of Braze's own, not both")
        if _communicator is None or _borrowed_from is not process_group:
            # The one before, if any, is destroyed once nothing else holds it.
            _communicator = _borrowed_from = None
            _communicator = _borrow(process_group, timeout_s)
            _borrowed_from = process_group
        return _communicator
    if _borrowed_from is not None and not _group_alive(_borrowed_from):
        _communicator = _borrowed_from = None
        raise Error("the process group whose NCCL communicator Braze borrowed was destroyed; "
                    "pass a live one: braze.multidevice.communicator(process_group=...)")
    if _communicator is None:
        if store is None and store_path is None:
            store = _torch_store(timeout_s)
        _communicator = Communicator(store_path=store_path, timeout_s=timeout_s, store=store)
    return _communicator


def release_communicator():
    """Lets go of this process's communicator. It is destroyed once nothing else holds it (drop
    your own references too), which first waits for the work Braze handed it. Call it before
    destroying a process group whose communicator Braze borrowed; the next communicator() call
    makes or borrows a new one."""
    global _communicator, _borrowed_from
    _communicator = _borrowed_from = None


def _group_alive(group):
    """Whether torch.distributed still has ``group`` (destroy_process_group frees its NCCL
    communicator, which a borrowed one must then no longer touch)."""
    import torch.distributed as dist

    try:
        return group in dist.distributed_c10d._world.pg_map
    except AttributeError:  # another PyTorch's internals: the default group's state at least
        return dist.is_initialized()


def _borrow(group, timeout_s):
    """A Communicator over ``group``'s NCCL communicator; errors say what ``group`` lacks."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        raise Error("communicator(process_group=...) borrows a PyTorch process group's NCCL "
                    "communicator, but PyTorch is not installed") from None
    if not dist.is_available():
        raise Error("communicator(process_group=...): this PyTorch has no torch.distributed")
    if not isinstance(group, dist.ProcessGroup):
        raise Error(f"communicator(process_group=...) takes a torch.distributed ProcessGroup "
                    f"(such as dist.group.WORLD), not {type(group).__name__}")
    if not torch.cuda.is_available():
        raise Error("communicator(process_group=...): PyTorch sees no CUDA device")
    bound = getattr(group, "bound_device_id", None)
    device = bound.index if bound is not None and bound.index is not None \
        else torch.cuda.current_device()
    cuda = torch.device("cuda", device)
    try:
        backend = group._get_backend(cuda)
    except RuntimeError as error:
        raise Error(f"communicator(process_group=...): the group has no backend for {cuda} "
                    f"({error}); make it with backend='nccl'") from None
    comm_ptr = getattr(backend, "_comm_ptr", None)
    if comm_ptr is None:
        raise Error(f"communicator(process_group=...): the group's backend for {cuda} is "
                    f"{type(backend).__name__}, not NCCL, or a PyTorch older than 2.8 that does "
                    f"not hand out its NCCL communicator; make the group with backend='nccl'")
    def handle_or_0():
        try:
            return int(comm_ptr())
        except RuntimeError:  # a PyTorch that refuses rather than answering 0
            return 0

    # PyTorch looks the communicator up by the current device.
    with torch.cuda.device(device):
        handle = handle_or_0()
        if handle == 0:
            # Made on the group's first collective (or eagerly with init_process_group's
            # device_id): every rank is here at the same point, as for any communicator.
            dist.all_reduce(torch.zeros(1, device=cuda), group=group)
            torch.cuda.synchronize(device)
            handle = handle_or_0()
    if handle == 0:
        raise Error(f"communicator(process_group=...): the group made no NCCL communicator for "
                    f"{cuda}, even after a collective; pass init_process_group device_id={cuda!r}")
    return Communicator._borrow(handle, group.rank(), group.size(), device, timeout_s, group)


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
