"""Host time per call from Python on a cache hit: Braze's fd.execute of a one-kernel fusion
next to the same elementwise op in PyTorch eager (one kernel launch through PyTorch's
dispatcher) and a torch.compile'd function that compiles to one kernel.

    python3 benchmarks/python/python_overhead.py [--calls N] [--json FILE]

Tensors are small (1024 floats), so each call's time is host time: the median over 7 rounds
of N back-to-back calls, with one synchronization at the end of each round.
"""

import argparse
import json
import statistics
import time

import torch

import braze
from braze import DataType, FusionDefinition


def per_call_us(fn, calls):
    rounds = []
    for _ in range(7):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--json")
    args = parser.parse_args()

    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.add(a, b), 2.0))
    torch.testing.assert_close(fd.execute([x, y])[0], (x + y) * 2.0)
    assert fd.counters()["kernels_compiled"] == 1

    def eager():
        return torch.add(x, y)

    compiled = torch.compile(lambda p, q: (p + q) * 2.0)
    torch.testing.assert_close(compiled(x, y), (x + y) * 2.0)

    to_dlpack = torch._C._to_dlpack
    executor = fd._executor

    def binding_alone():
        return executor.execute([to_dlpack(x), to_dlpack(y)], capsules=True)

    results = {
        "braze fd.execute (cache hit)": per_call_us(lambda: fd.execute([x, y]), args.calls),
        "braze binding alone (capsules)": per_call_us(binding_alone, args.calls),
        "torch eager add (one launch)": per_call_us(eager, args.calls),
        "torch.compile (one kernel)": per_call_us(lambda: compiled(x, y), args.calls),
    }
    device = torch.cuda.get_device_name()
    print(f"=== host time per call from Python, {device}, torch {torch.__version__}, braze {braze.__version__}")
    for name, us in results.items():
        print(f"{name:34s} {us:8.2f} us")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": device, "us_per_call": results}, out, indent=1)


if __name__ == "__main__":
    main()
