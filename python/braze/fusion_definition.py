"""FusionDefinition: define a fusion with nvFuser's direct-binding spelling, then execute it.

    with braze.FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.sum(fd.ops.exp(t0), dims=[1])
        fd.add_output(t1)
    outputs = fd.execute([torch.randn(8, 1024, device="cuda")])
"""

import numbers
import os
import sys
import tempfile

import numpy as np

from braze import _braze
from braze.data_type import DataType, from_torch
from braze.scheduler_params import SchedulerParams

Error = _braze.Error

# nvFuser's names for ops Braze spells otherwise.
_ALIASES = {
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "take_along_axis": "gather",
}
# Ops that make a tensor from nothing: the fusion is their first argument in the bindings.
_FACTORIES = {"full", "iota", "arange", "uniform", "normal"}


def compute_tensor_descriptor(sizes, strides):
    """(contiguity, stride_order) of a tensor with these sizes and strides, as nvFuser gives
    them: stride_order[i] is the rank of dim i's stride (0: the smallest); contiguity is in
    memory order, outermost first, None for size-1 (broadcast) dims."""
    if len(sizes) != len(strides):
        raise Error(f"compute_tensor_descriptor: {len(sizes)} sizes but {len(strides)} strides")
    rank = len(sizes)
    # Outermost first: larger strides first; ties keep the logical order (outer dim first).
    order = sorted(range(rank), key=lambda d: (-strides[d], d))
    stride_order = [0] * rank
    for position, dim in enumerate(order):
        stride_order[dim] = rank - 1 - position
    contiguity = []
    for k, dim in enumerate(order):
        if sizes[dim] == 1:
            contiguity.append(None)
            continue
        inner = next((d for d in order[k + 1 :] if sizes[d] != 1), None)
        expected = 1 if inner is None else strides[inner] * sizes[inner]
        contiguity.append(strides[dim] == expected)
    return contiguity, stride_order


def _layout(shape, contiguity, stride_order):
    """Braze's (contiguity per logical dim, allocation order) from nvFuser's arguments."""
    rank = len(shape)
    if stride_order:
        if sorted(stride_order) != list(range(rank)):
            raise Error(f"define_tensor: stride_order {stride_order} is not a permutation of 0..{rank - 1}")
        allocation = sorted(range(rank), key=lambda d: -stride_order[d])
    else:
        allocation = list(range(rank))
    if contiguity is None:
        contiguity = [None if size == 1 else False for size in shape]  # nvFuser's default
    elif isinstance(contiguity, bool):
        contiguity = [None if size == 1 else contiguity for size in shape]
    if len(contiguity) != rank:
        raise Error(f"define_tensor: {len(contiguity)} contiguity flags for {rank} dims")
    logical = [None] * rank
    for position, dim in enumerate(allocation):
        flag = contiguity[position]
        logical[dim] = None if shape[dim] == 1 else (True if flag is None else bool(flag))
    return logical, allocation if stride_order else []


class _Ops:
    """fd.ops: every op builder of the core, taking this fusion's values and Python numbers."""

    def __init__(self, definition):
        self._definition = definition

    def __getattr__(self, name):
        target = _ALIASES.get(name, name)
        builder = getattr(_braze.ops, target, None)
        if builder is None:
            raise AttributeError(
                f"fd.ops.{name}: Braze has no such op; the ops are: "
                + ", ".join(sorted(n for n in dir(_braze.ops) if not n.startswith("_")))
            )
        if target in _FACTORIES:
            fusion = self._definition._fusion

            def factory(*args, **kwargs):
                return builder(fusion, *args, **kwargs)

            return factory
        return builder


def _is_torch(value):
    return type(value).__module__.startswith("torch")


def _flatten(inputs):
    """Inputs with lists (vector inputs) flattened, as a run sees them."""
    flat = []
    for value in inputs:
        if isinstance(value, (list, tuple)):
            flat.extend(_flatten(value))
        else:
            flat.append(value)
    return flat


def _device_index(device):
    """The CUDA device ordinal of ``device``: an int, "cuda:1", or a torch.device."""
    if isinstance(device, str):
        return int(device.partition(":")[2] or 0)
    return int(getattr(device, "index", device) or 0)


def _host_array(value):
    """A result or reference value as a NumPy array (torch tensors widened from bfloat16 and
    the float8 types, which NumPy lacks)."""
    if _is_torch(value):
        value = value.detach().cpu()
        if str(value.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def _storage_elements(shape, strides):
    """Elements of the storage that a view of ``shape`` and ``strides`` (in elements) reaches."""
    if 0 in shape:
        return 1
    return 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))


def _input_expression(value):
    """Python source for an input shaped, typed and laid out like ``value``: fresh values in a
    storage large enough for its strides (gaps included)."""
    if _is_torch(value):
        if value.dim() == 0 and not value.is_cuda:
            return repr(value.item())
        shape, strides = tuple(value.shape), tuple(value.stride())
        fill = "randn" if value.is_floating_point() else "zeros"
        return (
            f"torch.{fill}({_storage_elements(shape, strides)}, device={str(value.device)!r})"
            f".to({value.dtype}).as_strided({shape}, {strides})"
        )
    if hasattr(value, "dtype") and hasattr(value, "strides"):
        dtype = str(value.dtype)
        base = (
            f"rng.standard_normal({{}}).astype({dtype!r})"
            if value.dtype.kind == "f"
            else f"np.zeros({{}}, dtype={dtype!r})"
        )
        if value.flags.c_contiguous:
            return base.format(value.shape)
        strides = tuple(s // value.itemsize for s in value.strides)
        return (
            f"np.lib.stride_tricks.as_strided({base.format(_storage_elements(value.shape, strides))}, "
            f"{value.shape}, {value.strides})"
        )
    return repr(value)


class _Sched:
    """fd.sched: schedulers by name ("braze::inner_outer", "inner_outer", "inner_outer@1").
    Each question is about the fusion as ``execute`` hands it to the schedulers, after the
    rewrites it applies first (an nvFuser-style var_mean as sums, redundant expands read
    through), so the answers agree with what ``execute`` runs."""

    def __init__(self, definition):
        self._definition = definition

    def can_schedule(self, name, inputs=None):
        """(accepted, reason): the structural check alone, or with ``inputs`` every check and
        the heuristics too."""
        fusion = self._definition._fusion
        return _braze.sched.can_schedule(fusion, name, None if inputs is None else inputs)

    def find_compatible_schedulers(self, inputs=None):
        fusion = self._definition._fusion
        return _braze.sched.find_compatible_schedulers(
            fusion, None if inputs is None else inputs
        )

    def compute_heuristics(self, name, inputs):
        """The params ``name`` would choose for ``inputs``: a SchedulerParams whose fields are
        read and written by name (``params.threads_x = 256``)."""
        chosen = _braze.sched.compute_heuristics(self._definition._fusion, name, inputs)
        return SchedulerParams(chosen["scheduler"], chosen["params"], chosen["fields"])

    def schedule(self, name_or_params, inputs=None):
        """The fusion as a scheduler schedules it, printed: by name for ``inputs`` (its
        heuristics), or with a SchedulerParams from compute_heuristics, edited or not."""
        fusion = self._definition._fusion
        if isinstance(name_or_params, SchedulerParams):
            params = name_or_params
            return _braze.sched.schedule_with_params(fusion, params.scheduler, params.to_bytes())
        if inputs is None:
            raise Error("schedule: pass the inputs the heuristics should see, or a "
                        "SchedulerParams from fd.sched.compute_heuristics")
        return _braze.sched.schedule(fusion, name_or_params, inputs)

    # ---- manual schedules (inside a FusionDefinition subclass's schedule())

    def transform_like(self, reference, selected=()):
        """Replays ``reference``'s loop transforms on ``selected`` (default: every tensor)."""
        _braze.sched.transform_like(reference, list(selected))

    def parallelize_like(self, reference, pos=-1, selected=()):
        """Copies ``reference``'s parallel types onto ``selected`` (default: every tensor)."""
        if pos != -1:
            raise Error("parallelize_like: Braze propagates every axis' parallel type; pos must be -1")
        _braze.sched.parallelize_like(reference, list(selected))

    def inline_most(self, selected=()):
        _braze.sched.inline_most(self._definition._fusion, list(selected))

    def inline_at(self, reference, pos):
        _braze.sched.inline_at(reference, pos)

    def to_string(self):
        """The fusion's schedule: loop domains, parallel and memory types."""
        return _braze.sched.print_schedule(self._definition._fusion)


class FusionDefinition:
    """A fusion under construction (inside ``with``), then an executable one."""

    def __init__(self):
        self._fusion = _braze.Fusion()
        self._executor = None
        self._sharded_executor = None
        # output index -> input index: outputs the extension writes into their input, and
        # outputs copied into a non-contiguous input after the run.
        self._in_place = {}
        self._aliases = {}
        self.ops = _Ops(self)
        self.sched = _Sched(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._executor = None
        self._sharded_executor = None
        return False

    # ---- definitions

    def define_tensor(
        self,
        shape=None,
        contiguity=None,
        dtype=DataType.Float,
        is_cpu=False,
        stride_order=None,
        *,
        sizes=None,
        strides=None,
        static_sizes=False,
    ):
        """A tensor input. nvFuser's two spellings: ``shape`` (-1 symbolic, 1 broadcast, else
        fixed) with ``contiguity`` (in memory order) and ``stride_order``; or ``sizes`` and
        ``strides`` of an example tensor (sizes symbolic unless ``static_sizes``)."""
        if sizes is not None:
            if strides is None:
                raise Error("define_tensor: sizes=... needs strides=... too")
            contiguity, stride_order = compute_tensor_descriptor(list(sizes), list(strides))
            shape = [s if (static_sizes or s == 1) else -1 for s in sizes]
        if shape is None:
            raise Error("define_tensor: give shape=[...] (or sizes=... and strides=...)")
        shape = [int(s) for s in shape]
        if is_cpu:
            if shape:
                raise Error(
                    "define_tensor: is_cpu=True is only for 0-d tensors (scalars on the host); "
                    "use define_scalar for a scalar input"
                )
            return self.define_scalar(dtype=dtype)
        if dtype is None:
            raise Error("define_tensor: dtype=DataType.Null is not a tensor dtype")
        logical, allocation = _layout(shape, contiguity, stride_order)
        return self._fusion.define_tensor(shape, logical, dtype, allocation)

    def from_pytorch(self, tensor, static_sizes=False):
        """A tensor input shaped and laid out like the torch tensor ``tensor``."""
        if tensor.dim() == 0 and not tensor.is_cuda:
            return self.define_scalar(dtype=from_torch(tensor.dtype))
        return self.define_tensor(
            sizes=list(tensor.size()),
            strides=list(tensor.stride()),
            dtype=from_torch(tensor.dtype),
            static_sizes=static_sizes,
        )

    def define_scalar(self, value=None, dtype=DataType.Double):
        """A constant (``value`` given) or a scalar input (``value`` None)."""
        if dtype is None:
            if value is None:
                raise Error("define_scalar: a scalar input needs a dtype")
            dtype = (
                DataType.Bool
                if isinstance(value, bool)
                else DataType.Int if isinstance(value, numbers.Integral) else DataType.Double
            )
        return self._fusion.define_scalar(dtype, value)

    def define_vector(self, size, dtype=DataType.Int):
        """``size`` scalar inputs, for a shape given at run time (pass a list of ints there)."""
        return [self.define_scalar(dtype=dtype) for _ in range(size)]

    def add_output(self, value, alias_input=None):
        """Marks ``value`` as an output. With ``alias_input`` (an input tensor of the same
        shape and dtype), execute writes the result into that input, as an in-place update
        (an optimizer step, a running statistic, a cache written by scatter), and does not
        return it. For an input defined contiguous (in any stride order) the kernel stores
        straight into the input's memory, or, where other parts of the fusion still read the
        input, a copy after them does; any other input gets the result copied in after the
        run."""
        if alias_input is not None:
            inputs = self._fusion.inputs()
            if alias_input not in inputs or not alias_input.is_tensor():
                raise Error("add_output(alias_input=...): the alias must be a tensor input of this fusion")
            if not value.is_tensor() or value.dtype != alias_input.dtype or value.ndim() != alias_input.ndim():
                raise Error(
                    f"add_output(alias_input=...): {value.name} ({value.dtype}, rank {value.ndim()}) "
                    f"cannot be written into {alias_input.name} ({alias_input.dtype}, rank "
                    f"{alias_input.ndim()}): dtype and rank must agree"
                )
            position = len(self._fusion.outputs())
            self._fusion.add_output(value)
            if all(c is not False for c in alias_input.contiguity()):
                self._fusion.alias_output_to_input(value, alias_input)
                self._in_place[position] = inputs.index(alias_input)
            else:
                self._aliases[position] = inputs.index(alias_input)
        else:
            self._fusion.add_output(value)
        self._executor = None

    def fusion(self):
        return self._fusion

    def __str__(self):
        return str(self._fusion)

    def __repr__(self):
        """The definition as a Python function that builds it again."""
        return _braze.python_definition(self._fusion, self._aliases)

    def repro(self, inputs, path=None):
        """A runnable script: this definition, inputs with the same shapes, dtypes and strides
        (fresh random values), the schedulers found and the last runtime's segments. Written to
        ``path`` when given; returned either way."""
        lines = [
            "# A Braze repro: python3 this_file.py",
            f"# braze {_braze.__version__}; schedulers: "
            + ", ".join(f"{s['id']}@{s['version']} ({s['status']})" for s in _braze.schedulers()),
        ]
        for segment in self.last_runtime().splitlines():
            lines.append(f"# last run: {segment}")
        definition = repr(self)
        lines += ["import numpy as np", "from braze import DataType, FusionDefinition, ParallelType"]
        if "DeviceMesh(" in definition:
            lines.append("from braze.multidevice import DeviceMesh")
        lines += ["", definition]
        lines += ["", "def make_inputs():", "    rng = np.random.default_rng(0)", "    inputs = []"]
        uses_torch = any(_is_torch(v) for v in inputs)
        for value in _flatten(inputs):
            lines.append("    inputs.append(" + _input_expression(value) + ")")
        lines += [
            "    return inputs",
            "",
            "",
            'if __name__ == "__main__":',
            "    fd = FusionDefinition()",
            "    braze_fusion(fd)",
            "    outputs = fd.execute(make_inputs())",
            "    print([getattr(o, 'shape', o) for o in outputs])",
        ]
        if uses_torch:
            lines.insert(lines.index("import numpy as np") + 1, "import torch")
        script = "\n".join(lines) + "\n"
        if path is not None:
            with open(path, "w") as out:
                out.write(script)
        return script

    # ---- execution

    def execute(self, inputs, device=None, scheduler=None, cuda_graph=False, **unsupported):
        """The fusion's outputs for ``inputs`` (tensors, 0-d CPU tensors, Python numbers and
        lists of them). torch inputs give torch outputs, NumPy inputs NumPy outputs.
        ``scheduler`` forces one ("braze::inner_outer", "inner_outer", "inner_outer@1").
        ``cuda_graph=True`` captures the run as a CUDA graph on first use for these input
        shapes and replays it after (copies of host inputs included, when they are pinned):
        the outputs are then the graph's own buffers, overwritten by the next such call, so
        clone what you keep."""
        if cuda_graph and (self._sharded_executor is not None
                           or _braze.multidevice.is_sharded(self._fusion)):
            raise Error("execute: a sharded definition does not replay as a CUDA graph yet; "
                        "leave cuda_graph out")
        if self._sharded_executor is not None:
            return self._execute_sharded(inputs, device, scheduler, unsupported)
        executor = self._executor
        if executor is None or unsupported:
            if _braze.multidevice.is_sharded(self._fusion):
                return self._execute_sharded(inputs, device, scheduler, unsupported)
            executor = self._make_executor(unsupported)
        for position in self._in_place.values():
            target = inputs[position] if position < len(inputs) else None
            if isinstance(target, np.ndarray) and not target.flags.writeable:
                raise Error(
                    f"execute: input {position} is a read-only NumPy array, but an output is "
                    "written into it (add_output(alias_input=...)); pass a writeable array"
                )
        try:
            # The cache-hit path: one call into the extension, which converts the inputs,
            # looks the run up, launches and converts the outputs.
            outputs = executor.execute(
                inputs, scheduler or "", 0 if device is None else _device_index(device),
                bool(cuda_graph)
            )
        except Error as error:
            raise Error(f"{error}\n{self._write_repro(inputs)}") from None
        if not self._aliases and not self._in_place:
            return outputs
        return self._write_aliases(inputs, outputs)

    def _execute_sharded(self, inputs, device, scheduler, unsupported):
        """This rank's parts of the outputs of a sharded definition, from its parts of the
        inputs on its GPU, over the process's communicator (braze.multidevice.communicator())."""
        from braze import multidevice

        if unsupported:
            raise Error(f"execute: Braze does not take {sorted(unsupported)}")
        if device is not None or scheduler:
            raise Error("execute: a sharded definition runs on its rank's GPU with the default "
                        "schedulers; leave device and scheduler out")
        if self._sharded_executor is None:
            self._sharded_executor = _braze.multidevice.ShardedExecutor(self._fusion)
        try:
            return self._sharded_executor.execute(list(inputs), multidevice.communicator())
        except Error as error:
            raise Error(f"{error}\n{self._write_repro(inputs)}") from None

    def _make_executor(self, unsupported):
        if unsupported:
            raise Error(f"execute: Braze does not take {sorted(unsupported)}")
        if self._executor is None:
            if not self._fusion.outputs():
                raise Error("execute: the fusion has no outputs; mark results with fd.add_output")
            self._executor = _braze.Executor(self._fusion)
        return self._executor

    def _write_aliases(self, inputs, outputs):
        """Copies each output aliased to a non-contiguous input into it; returns the outputs
        that are not written into inputs."""
        for output, position in self._aliases.items():
            target, result = inputs[position], outputs[output]
            if _is_torch(target):
                target.copy_(result)
            else:
                np.copyto(target, np.asarray(result))
        return [
            out for i, out in enumerate(outputs) if i not in self._aliases and i not in self._in_place
        ]


    def _write_repro(self, inputs):
        """Where a failed execution's repro script went (or why there is none)."""
        try:
            handle, path = tempfile.mkstemp(prefix="braze_repro_", suffix=".py")
            os.close(handle)
            self.repro(inputs, path)
            return f"A script that repeats this: {path}"
        except Exception as why:  # a repro must never hide the error it documents
            return f"(no repro script: {why})"

    def evaluate(self, inputs):
        """The outputs by the reference evaluator (host inputs only; NumPy arrays, or torch CPU
        tensors for torch inputs): what ``validate`` compares with, and a way to run ops no
        scheduler takes yet."""
        return _braze.evaluate(self._fusion, inputs)

    def validate(self, inputs, reference_outputs=None, rtol=None, atol=None):
        """Executes and checks every output against the reference evaluator (or
        ``reference_outputs``); raises AssertionError naming the output and the difference."""
        import numpy as np

        outputs = self.execute(inputs)
        if reference_outputs is None:
            host = [v.detach().cpu() if _is_torch(v) else v for v in inputs]
            reference_outputs = _braze.evaluate(self._fusion, host)
        for i, (out, ref) in enumerate(zip(outputs, reference_outputs)):
            actual = _host_array(out)
            expected = _host_array(ref)
            kind = str(actual.dtype)
            tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-10}.get(kind, 0)
            if _is_torch(out) and str(out.dtype) == "torch.bfloat16":
                tol = 2e-2
            r = tol if rtol is None else rtol
            a = tol if atol is None else atol
            if not np.allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=r, atol=a, equal_nan=True):
                diff = np.nanmax(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
                raise AssertionError(f"output {i}: largest difference {diff} (rtol {r}, atol {a})")
        return outputs

    # ---- manual schedules: a subclass defines definition() and schedule()

    def _define_and_schedule(self):
        cls = type(self)
        if cls.definition is not FusionDefinition.definition and not self._fusion.outputs():
            with self:
                self.definition()
        if cls.schedule is not FusionDefinition.schedule and not getattr(self, "_scheduled", False):
            self.schedule()
            self._scheduled = True

    def definition(self):
        """Overridden by a subclass: defines the fusion (called by manual_execute)."""

    def schedule(self):
        """Overridden by a subclass: schedules the fusion by hand with the tensors' split,
        merge, reorder, axis(i).parallelize, rfactor, cache_after, cache_before,
        set_memory_type and fd.sched's transform_like, parallelize_like, inline_most and
        inline_at. A manually scheduled fusion runs through manual_execute only."""

    def manual_compile(self, arch="sm_90"):
        """Compiles the manually scheduled fusion into one kernel with NVRTC (no GPU needed):
        {"kernel_name", "source", "registers", "cubin_bytes"}."""
        self._define_and_schedule()
        return _braze.sched.compile(self._fusion, arch)

    def manual_execute(self, inputs):
        """Runs the manually scheduled fusion as one kernel on CUDA tensors."""
        self._define_and_schedule()
        return _braze.sched.run(self._fusion, inputs)

    def last_runtime(self):
        """How the last execute ran: one line per segment (scheduler and params)."""
        return self._executor.describe_last_runtime() if self._executor else ""

    def last_host_program(self):
        """The host program the last execute ran (allocations, launches, stream loops), as
        BRAZE_DUMP=host_ir prints it."""
        return self._executor.last_host_program() if self._executor else ""

    def counters(self):
        return self._executor.counters() if self._executor else {}
