"""SchedulerParams: a scheduler's heuristic params as an object whose fields are read and
written by name, from the plugin's own description of its params (plugin ABI 1.2)."""

import struct

from braze import _braze

_FORMATS = {"int64": "<q", "bool": "<q", "float64": "<d"}


class SchedulerParams:
    """What ``fd.sched.compute_heuristics(name, inputs)`` returns. ``params.threads_x`` reads a
    field, ``params.threads_x = 256`` writes it (the scheduler checks edited values when it
    schedules with them: ``fd.sched.schedule(params)``). ``fields()`` lists the names,
    ``str(params)`` is the scheduler's own summary, ``to_bytes()`` the encoded params."""

    __slots__ = ("_scheduler", "_bytes", "_fields")

    def __init__(self, scheduler, params, fields):
        object.__setattr__(self, "_scheduler", scheduler)
        object.__setattr__(self, "_bytes", bytearray(params))
        object.__setattr__(self, "_fields", {name: (kind, offset) for name, kind, offset in fields})

    @property
    def scheduler(self):
        """The scheduler that computed them, "id@version"."""
        return self._scheduler

    def fields(self):
        """The field names, in the scheduler's order (empty when its params are opaque)."""
        return list(self._fields)

    def to_bytes(self):
        return bytes(self._bytes)

    def to_dict(self):
        return {name: getattr(self, name) for name in self._fields}

    def _field(self, name):
        try:
            return self._fields[name]
        except KeyError:
            known = ", ".join(self._fields) or "none: this scheduler's params are opaque"
            raise AttributeError(
                f"{self._scheduler} params have no field '{name}' (fields: {known})"
            ) from None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        kind, offset = self._field(name)
        (value,) = struct.unpack_from(_FORMATS[kind], self._bytes, offset)
        return bool(value) if kind == "bool" else value

    def __setattr__(self, name, value):
        kind, offset = self._field(name)
        if kind == "bool":
            if not isinstance(value, bool):
                raise TypeError(f"{name} is a bool field; got {type(value).__name__}")
            value = int(value)
        elif kind == "int64":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} is an integer field; got {type(value).__name__}")
        else:
            value = float(value)
        struct.pack_into(_FORMATS[kind], self._bytes, offset, value)

    def __str__(self):
        return _braze.sched.describe_params(self._scheduler, self.to_bytes())

    def __repr__(self):
        return f"SchedulerParams({self._scheduler}: {self})"
