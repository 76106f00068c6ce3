"""Shared fixtures of the Python tests: seeded NumPy inputs, and whether a CUDA device with
PyTorch is present (the GPU tier skips itself otherwise)."""

import numpy as np
import pytest


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
