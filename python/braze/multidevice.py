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

``fd.execute`` still refuses sharded definitions: running them on GPUs over NCCL comes next.
"""

from braze._braze.multidevice import DeviceMesh, SimulatedRun  # noqa: F401


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
