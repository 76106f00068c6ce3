"""braze.LRUCache: one compiled fusion per structurally equal definition, for frameworks that
rebuild the same fusion every step."""

from braze import _braze
from braze.fusion_definition import _device_index


class CompiledFusion:
    """A definition's executor cache, shared by every structurally equal definition."""

    def __init__(self, executor):
        self._executor = executor

    def execute(self, inputs, device=None, scheduler=None):
        return self._executor.execute(
            inputs, scheduler or "", 0 if device is None else _device_index(device)
        )

    def fusion(self):
        return self._executor.fusion()

    def counters(self):
        return self._executor.counters()


class LRUCache:
    """Keeps at most ``max_fusions`` definitions (least recently used dropped first)."""

    def __init__(self, max_fusions=256):
        self._cache = _braze.DefinitionCache(max_fusions)

    def cache_compile(self, definition):
        """The compiled fusion of ``definition`` (a FusionDefinition or a Fusion)."""
        fusion = definition.fusion() if hasattr(definition, "fusion") else definition
        return CompiledFusion(self._cache.get(fusion))

    def num_fusions(self):
        return self._cache.size()

    def counters(self):
        return self._cache.counters()
