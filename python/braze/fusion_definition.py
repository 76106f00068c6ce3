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
from braze.data_type import DataType, from_numpy, from_torch

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


def _arguments(inputs):
    """Inputs as the bindings take them (see _convert)."""
    return _convert(inputs)[0]


def _convert(inputs):
    """(arguments, torch_io): CUDA torch tensors as DLPack capsules from torch's C++ export,
    host torch tensors as NumPy views, 0-d host tensors as numbers, lists flattened (vector
    inputs), everything else as given; torch_io when any input was a torch tensor. On the
    cache-hit path: one pass, torch's functions looked up once."""
    torch = _torch_functions or _torch()
    tensor_type = torch[0] if torch is not None else ()
    arguments = []
    torch_io = False
    for value in inputs:
        if isinstance(value, tensor_type):
            torch_io = True
            if value.is_cuda:
                arguments.append(torch[1](value))
            elif value.dim() == 0:
                arguments.append(value.item())
            else:
                arguments.append(value.detach().numpy())
        elif isinstance(value, (list, tuple)):
            nested, nested_torch = _convert(value)
            arguments.extend(nested)
            torch_io |= nested_torch
        else:
            arguments.append(value)
    return arguments, torch_io


_torch_functions = None  # (torch.Tensor, to_dlpack, from_dlpack, torch), once torch is loaded


def _torch():
    """torch's tensor type and DLPack entry points, looked up once torch has been imported
    (Braze never imports it itself)."""
    global _torch_functions
    if _torch_functions is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        # torch._C._to_dlpack / _from_dlpack: the C++ functions behind Tensor.__dlpack__ and
        # torch.from_dlpack, without their Python-level checks (several microseconds each).
        to_dlpack = getattr(torch._C, "_to_dlpack", None) or (lambda t: t.__dlpack__())
        from_dlpack = getattr(torch._C, "_from_dlpack", None) or torch.utils.dlpack.from_dlpack
        _torch_functions = (torch.Tensor, to_dlpack, from_dlpack, torch)
    return _torch_functions


def _execute(executor, inputs, device, scheduler):
    """Runs ``executor`` on ``inputs``; torch inputs give torch outputs (positional arguments
    to the binding: the cache-hit path stays short)."""
    arguments, torch_io = _convert(inputs)
    raw = executor.execute(
        arguments,
        scheduler or "",
        0 if device is None else int(getattr(device, "index", device) or 0),
        torch_io,
    )
    if not torch_io:
        return raw
    torch = _torch_functions
    from_dlpack = torch[2]
    capsule = _braze.CapsuleType
    return [
        from_dlpack(out) if type(out) is capsule
        else torch[3].from_numpy(out) if hasattr(out, "shape")
        else out
        for out in raw
    ]


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
    """fd.sched: schedulers by name ("braze::inner_outer", "inner_outer", "inner_outer@1")."""

    def __init__(self, definition):
        self._definition = definition

    def can_schedule(self, name, inputs=None):
        """(accepted, reason): the structural check alone, or with ``inputs`` every check and
        the heuristics too."""
        fusion = self._definition._fusion
        return _braze.sched.can_schedule(fusion, name, None if inputs is None else _arguments(inputs))

    def find_compatible_schedulers(self, inputs=None):
        fusion = self._definition._fusion
        return _braze.sched.find_compatible_schedulers(
            fusion, None if inputs is None else _arguments(inputs)
        )

    def compute_heuristics(self, name, inputs):
        """{"scheduler", "params" (bytes), "summary"}: what ``name`` would choose."""
        return _braze.sched.compute_heuristics(self._definition._fusion, name, _arguments(inputs))

    def schedule(self, name, inputs):
        """The fusion as ``name`` schedules it for ``inputs``, printed."""
        return _braze.sched.schedule(self._definition._fusion, name, _arguments(inputs))

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
        self._aliases = {}  # output index -> input index it is written into
        self.ops = _Ops(self)
        self.sched = _Sched(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._executor = None
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
        (an optimizer step, a running statistic), and does not return it. The kernel writes a
        fresh buffer that is then copied into the input: aliasing without the copy is not
        done yet."""
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
            self._aliases[len(self._fusion.outputs())] = inputs.index(alias_input)
        self._fusion.add_output(value)
        self._executor = None

    def fusion(self):
        return self._fusion

    def __str__(self):
        return str(self._fusion)

    def __repr__(self):
        """The definition as a Python function that builds it again."""
        return _braze.python_definition(self._fusion)

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
        lines += ["import numpy as np", "from braze import DataType, FusionDefinition", ""]
        lines.append(repr(self))
        lines += ["", "def make_inputs():", "    rng = np.random.default_rng(0)", "    inputs = []"]
        uses_torch = any(_is_torch(v) for v in inputs)
        for value in _arguments(inputs) if not uses_torch else inputs:
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

    def _arguments(self, inputs):
        return _arguments(inputs)

    def execute(self, inputs, device=None, scheduler=None, **unsupported):
        """The fusion's outputs for ``inputs`` (tensors, 0-d CPU tensors, Python numbers and
        lists of them). torch inputs give torch outputs, NumPy inputs NumPy outputs.
        ``scheduler`` forces one ("braze::inner_outer", "inner_outer", "inner_outer@1")."""
        if unsupported:
            raise Error(f"execute: Braze does not take {sorted(unsupported)}")
        if self._executor is None:
            if not self._fusion.outputs():
                raise Error("execute: the fusion has no outputs; mark results with fd.add_output")
            self._executor = _braze.Executor(self._fusion)
        try:
            outputs = _execute(self._executor, inputs, device, scheduler)
        except Error as error:
            raise Error(f"{error}\n{self._write_repro(inputs)}") from None
        if not self._aliases:
            return outputs
        return self._write_aliases(inputs, outputs)

    def _write_aliases(self, inputs, outputs):
        """Copies each aliased output into its input; returns the other outputs."""
        for output, position in self._aliases.items():
            target, result = inputs[position], outputs[output]
            if _is_torch(target):
                target.copy_(result)
            else:
                np.copyto(target, np.asarray(result))
        return [out for i, out in enumerate(outputs) if i not in self._aliases]


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
        """The outputs by the reference evaluator (NumPy arrays; host inputs only): what
        ``validate`` compares with, and a way to run ops no scheduler takes yet."""
        return _braze.evaluate(self._fusion, self._arguments(inputs))

    def validate(self, inputs, reference_outputs=None, rtol=None, atol=None):
        """Executes and checks every output against the reference evaluator (or
        ``reference_outputs``); raises AssertionError naming the output and the difference."""
        import numpy as np

        outputs = self.execute(inputs)
        if reference_outputs is None:
            host = [
                v.detach().cpu().numpy() if _is_torch(v) and v.dim() > 0
                else v.item() if _is_torch(v) else v
                for v in inputs
            ]
            reference_outputs = _braze.evaluate(self._fusion, self._arguments(host))
        for i, (out, ref) in enumerate(zip(outputs, reference_outputs)):
            actual = out.detach().float().cpu().numpy() if _is_torch(out) else np.asarray(out)
            expected = np.asarray(ref.detach().cpu().numpy() if _is_torch(ref) else ref)
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
        torch = _torch()
        raw = _braze.sched.run(self._fusion, _arguments(inputs))
        if torch is not None and any(isinstance(v, torch[0]) for v in inputs):
            return [torch[3].from_dlpack(out) for out in raw]
        return raw

    def last_runtime(self):
        """How the last execute ran: one line per segment (scheduler and params)."""
        return self._executor.describe_last_runtime() if self._executor else ""

    def counters(self):
        return self._executor.counters() if self._executor else {}
