"""Shared fixtures of the Python tests: seeded NumPy inputs, and whether a CUDA device with
PyTorch is present (the GPU tier skips itself otherwise)."""

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def repro_scripts_in_the_test_folder(tmp_path, monkeypatch):
    """A failed execution writes a repro script into the temporary folder: the tests that
    provoke failures keep theirs in the test's own folder, not in /tmp."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def _saved_contents(inputs):
    """The contents of the arrays and tensors among ``inputs`` (runs may write into them), to put
    back with _restore before running the same inputs again."""
    saved = []
    for value in inputs if isinstance(inputs, (list, tuple)) else [inputs]:
        if isinstance(value, (list, tuple)):
            saved += _saved_contents(value)
        elif isinstance(value, np.ndarray):
            saved.append((value, value.copy(order="K")))
        elif hasattr(value, "clone") and hasattr(value, "copy_"):
            saved.append((value, value.clone()))
    return saved


def _copy_of(value):
    return value.clone() if hasattr(value, "clone") else np.array(value, copy=True)


def _restore(saved):
    for target, contents in saved:
        if isinstance(target, np.ndarray):
            np.copyto(target, contents)
        else:
            target.copy_(contents)


def _strides(value):
    if isinstance(value, np.ndarray):
        return value.strides
    return tuple(value.stride()) if hasattr(value, "stride") else None


@pytest.fixture(autouse=True)
def every_fusion_round_trips_through_repr(monkeypatch):
    """Every fusion a test executes or evaluates is rebuilt from its repr afterwards and run
    again on the same inputs, their contents put back as they were before the test's run: the
    same canonical form, the same values and the same strides."""
    from braze import FusionDefinition
    from braze.fusion_definition import _host_array

    runs = []

    def recording(name):
        original = getattr(FusionDefinition, name)

        def run(self, inputs, *args, **kwargs):
            before = _saved_contents(inputs)
            outputs = original(self, inputs, *args, **kwargs)
            # A graph run's outputs are the graph's buffers, which its next run overwrites.
            kept = [_copy_of(o) for o in outputs] if kwargs.get("cuda_graph") else outputs
            runs.append((self, name, inputs, before, args, kwargs, kept))
            return outputs

        return run

    for name in ("execute", "evaluate"):
        monkeypatch.setattr(FusionDefinition, name, recording(name))
    yield
    monkeypatch.undo()
    for fd, name, inputs, before, args, kwargs, outputs in runs:
        again = check_repro(fd)
        _restore(before)
        again_outputs = getattr(again, name)(inputs, *args, **kwargs)
        assert len(again_outputs) == len(outputs), repr(fd)
        for i, (ours, theirs) in enumerate(zip(outputs, again_outputs)):
            assert _strides(theirs) == _strides(ours), f"output {i} of\n{fd!r}"
            np.testing.assert_array_equal(_host_array(theirs), _host_array(ours), err_msg=f"output {i} of\n{fd!r}")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def cuda_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


requires_cuda = pytest.mark.skipif(cuda_torch() is None, reason="needs PyTorch with a CUDA device")


def check_repro(fd, inputs=None):
    """repr(fd) run with only FusionDefinition, DataType, ParallelType and DeviceMesh in scope
    rebuilds an equal fusion (same canonical form) that gives the same results on ``inputs``."""
    from braze import DataType, FusionDefinition, ParallelType
    from braze.multidevice import DeviceMesh

    scope = {
        "FusionDefinition": FusionDefinition,
        "DataType": DataType,
        "ParallelType": ParallelType,
        "DeviceMesh": DeviceMesh,
    }
    exec(repr(fd), scope)
    again = FusionDefinition()
    scope["braze_fusion"](again)
    assert again.fusion().canonical_form() == fd.fusion().canonical_form(), repr(fd)
    if inputs is not None:
        for ours, theirs in zip(fd.evaluate(inputs), again.evaluate(inputs)):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    return again
