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

A mesh's device ids are the ranks of the launch.
"""

from braze._braze.multidevice import Communicator, DeviceMesh, SimulatedRun  # noqa: F401

_communicator = None


def communicator(store_path=None, timeout_s=600.0):
    """This process's communicator, made on first use from the launcher's variables (RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, or Open MPI's and Slurm's). NCCL's id is
    exchanged through a TCP store that rank 0 serves at MASTER_ADDR:MASTER_PORT, or through
    ``store_path``, a folder every rank can reach. Each rank uses the GPU of its local rank."""
    global _communicator
    if _communicator is None:
        _communicator = Communicator(store_path=store_path, timeout_s=timeout_s)
    return _communicator


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
