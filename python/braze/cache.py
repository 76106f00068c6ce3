"""braze.cache: the persistent cache, where compiled kernels and the runtimes' decisions (the
segmentation and each scheduler's params) are kept for later processes.

    braze.cache.enable()                  # this process reads and fills the cache folder
    braze.cache.save("kernels.bzb")       # every kernel of the folder in one file
    braze.cache.load("kernels.bzb")       # ... added to another machine's folder

The folder is $BRAZE_CACHE_DIR, else $XDG_CACHE_HOME/braze, else ~/.cache/braze (``directory()``);
every function takes ``directory=`` to work on another one. Nothing read from disk is trusted:
an entry that fails its checks is skipped (and recompiled), never run.
"""

import os

from braze import _braze


def enable(directory=None):
    """Makes the cache folder (``directory``, or the default one) this process's kernel store
    and decision store: a later process that runs the same fusions neither segments, nor runs
    the schedulers' heuristics, nor calls NVRTC for them. Call it before the first execute."""
    if directory is not None:
        os.environ["BRAZE_CACHE_DIR"] = os.fspath(directory)
    _braze.use_persistent_cache()


def directory():
    """The default cache folder, or None when BRAZE_CACHE_DIR is "off"."""
    return _braze.cache_directory()


def save(path, directory=None):
    """Writes every valid kernel of the folder into the bundle file ``path``; how many."""
    return _braze.cache_save(os.fspath(path), directory)


def load(path, directory=None):
    """Adds the kernels of the bundle ``path`` that pass every check to the folder:
    {"added", "skipped", "problems"}."""
    return _braze.cache_load(os.fspath(path), directory)


def entries(directory=None):
    """The folder's kernel entries, each checked: path, key, bytes, valid, problem,
    kernel_name, arch, registers, last_use (Unix seconds)."""
    return _braze.cache_entries(directory)


def prune(max_bytes, directory=None):
    """Removes the least recently used kernels until the rest fit in ``max_bytes``."""
    return _braze.cache_prune(max_bytes, directory)


def clear(directory=None):
    """Removes every kernel and runtime entry of the folder; how many."""
    return _braze.cache_clear(directory)
