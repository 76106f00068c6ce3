"""Host time per call from Python on a cache hit: Braze's fd.execute of a one-kernel fusion
next to the same elementwise op in PyTorch eager (one kernel launch through PyTorch's
dispatcher), a torch.compile'd function that compiles to one kernel, and nvFuser's
fd.execute of the same definition when `nvfuser_direct` imports (../shared/peers).

    python3 benchmarks/python/python_overhead.py [--calls N] [--json FILE]

Tensors are small (1024 floats), so each call's time is host time: the median over 9 rounds
of N back-to-back calls, with one synchronization at the end of each round. The rounds of all
rows are interleaved (round 1 of every row, then round 2, ...), so that a change in the host's
speed during the run moves every row alike. The rows below
the line split Braze's call into its parts: torch's DLPack export and import (what a call
pays per input and per output) and the extension's call without the FusionDefinition method.
The raw launch of the same kernel (cuLaunchKernelEx, no cache) is the C++ host-latency
benchmark's raw_launch/1_kernel, run by tools/gpu-test.sh in the same call.
"""

import argparse
import json
import statistics
import time

import torch

import braze
from braze import DataType, FusionDefinition


def per_call_us(functions, calls, rounds=9):
    """{name: median microseconds per call}, the rounds of all functions interleaved."""
    times = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(values) for name, values in times.items()}


def define(fd, data_type):
    a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=data_type.Float)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=data_type.Float)
    fd.add_output(fd.ops.mul(fd.ops.add(a, b), 2.0))


def nvfuser_execute(x, y):
    """nvFuser's fd.execute of the same definition, or None where nvfuser_direct is absent."""
    try:
        import nvfuser_direct
    except ImportError:
        return None
    with nvfuser_direct.FusionDefinition() as fd:
        define(fd, nvfuser_direct.DataType)
    torch.testing.assert_close(fd.execute([x, y])[0], (x + y) * 2.0)
    return lambda: fd.execute([x, y])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--json")
    args = parser.parse_args()

    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    with FusionDefinition() as fd:
        define(fd, DataType)
    torch.testing.assert_close(fd.execute([x, y])[0], (x + y) * 2.0)
    assert fd.counters()["kernels_compiled"] == 1

    compiled = torch.compile(lambda p, q: (p + q) * 2.0)
    torch.testing.assert_close(compiled(x, y), (x + y) * 2.0)
    nvfuser = nvfuser_execute(x, y)

    executor = fd._executor
    to_dlpack, from_dlpack = torch._C._to_dlpack, torch._C._from_dlpack
    functions = {
        "braze fd.execute (cache hit)": lambda: fd.execute([x, y]),
        "torch eager add (one launch)": lambda: torch.add(x, y),
        "torch.compile (one kernel)": lambda: compiled(x, y),
    }
    if nvfuser is not None:
        functions["nvfuser fd.execute (cache hit)"] = nvfuser
    functions["-- braze extension call alone"] = lambda: executor.execute([x, y])
    functions["-- torch DLPack export (per input)"] = lambda: to_dlpack(x)
    functions["-- torch DLPack export + import"] = lambda: from_dlpack(to_dlpack(x))
    results = per_call_us(functions, args.calls)
    device = torch.cuda.get_device_name()
    print(f"=== host time per call from Python, {device}, torch {torch.__version__}, braze {braze.__version__}")
    for name, us in results.items():
        print(f"{name:36s} {us:8.2f} us")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": device, "us_per_call": results}, out, indent=1)


if __name__ == "__main__":
    main()
