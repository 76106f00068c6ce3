"""Braze: a GPU fusion compiler. Define a fusion, execute it, get tensors back."""

from braze import _braze, cache, multidevice  # noqa: F401
from braze._braze import Error, MemoryType, ParallelType, __version__  # noqa: F401
from braze.data_type import DataType  # noqa: F401
from braze.fusion_definition import FusionDefinition, compute_tensor_descriptor  # noqa: F401
from braze.lru_cache import CompiledFusion, LRUCache  # noqa: F401
from braze.scheduler_params import SchedulerParams  # noqa: F401


def schedulers():
    """Every scheduler found: id, version, rank, status ("available", "refused", ...), the
    reason for a refusal, and the plugin's path."""
    return _braze.schedulers()


def use_persistent_cache():
    """Keeps compiled kernels and decisions in $BRAZE_CACHE_DIR (default ~/.cache/braze), so
    that the next process neither schedules nor compiles what this one did (braze.cache.enable)."""
    cache.enable()


def cache_directory():
    return cache.directory()
