"""Sharded definitions: device meshes, as nvFuser's direct frontend spells them.

    mesh = braze.multidevice.DeviceMesh([0, 1, 2, 3])
    t.set_device_mesh(mesh)
    t.outer_split(1, mesh.size)
    t.axis(1).parallelize(braze.ParallelType.mesh_x)

A definition keeps global shapes; each rank will run its shard. Running sharded definitions
needs the multi-device runtime, which is not there yet: execute refuses them, naming the
tensor and its sharding.
"""

from braze._braze.multidevice import DeviceMesh  # noqa: F401
