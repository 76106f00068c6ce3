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
    """repr(fd) run with only FusionDefinition and DataType in scope rebuilds an equal fusion
    (same canonical form) that gives the same results on ``inputs``."""
    from braze import DataType, FusionDefinition

    scope = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), scope)
    again = FusionDefinition()
    scope["braze_fusion"](again)
    assert again.fusion().canonical_form() == fd.fusion().canonical_form(), repr(fd)
    if inputs is not None:
        for ours, theirs in zip(fd.evaluate(inputs), again.evaluate(inputs)):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    return again
