"""Device meshes from Python (braze.multidevice), spelled as nvFuser's direct frontend spells
them: the mesh's layout and refusals, and a sharded definition, which the single-device runtime
refuses by name until the multi-device runtime exists."""

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
    with pytest.raises(braze.Error, match=r"places T1 on mesh\{0, 1\} axis 1 over DIDx"):
        fd.execute([rng.standard_normal((4, 8)).astype(np.float32)])


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
