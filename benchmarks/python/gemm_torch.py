#!/usr/bin/env python3
"""PyTorch beside braze_gemm_benchmark: the same GEMMs as eager PyTorch (cuBLAS through
torch.nn.functional.linear) and as torch.compile with mode="max-autotune-no-cudagraphs"
(Inductor's Triton GEMM templates autotuned against cuBLAS), bf16, timed like the C++
benchmark: one untimed launch, then CUDA events around 10 back-to-back launches, 20 samples,
the median, with an idle gap between samples (the GPU throttles under back-to-back load).

Cases: linear(x [M, K], w [N, K]) and gelu_tanh(linear(x, w, bias)) (+ residual), the shapes of
BM_Gemm and BM_GemmEpilogue. Compiling with max-autotune takes tens of seconds per case; cases
are compiled until --compile-budget seconds have passed, and the rest are reported as not
compiled.

    python3 benchmarks/python/gemm_torch.py [--compile-budget 300] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

SHAPES = [
    ("linear", 8192, 8192, 8192),
    ("linear", 4096, 11008, 4096),
    ("linear", 1024, 11008, 4096),
    ("linear", 1024, 1024, 8192),
    ("linear", 16384, 28672, 8192),
    ("bias_gelu", 8192, 8192, 8192),
    ("bias_gelu", 4096, 11008, 4096),
    ("bias_gelu_residual", 8192, 8192, 8192),
    ("bias_gelu_residual", 4096, 11008, 4096),
]


def function_of(kind):
    if kind == "linear":
        return lambda x, w, b, r: F.linear(x, w)
    if kind == "bias_gelu":
        return lambda x, w, b, r: F.gelu(F.linear(x, w, b), approximate="tanh")
    return lambda x, w, b, r: F.gelu(F.linear(x, w, b), approximate="tanh") + r


def median_ms(fn, args, samples=20, launches=10, gap_s=0.02):
    fn(*args)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        time.sleep(gap_s)
        start.record()
        for _ in range(launches):
            fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / launches)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile-budget", type=float, default=300.0)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    torch.manual_seed(0)
    device = torch.cuda.get_device_name()
    print(f"device: {device}, torch {torch.__version__}")
    rows = []
    began = time.time()
    for kind, m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        r = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        fn = function_of(kind)
        flops = 2.0 * m * n * k
        eager_ms = median_ms(fn, (x, w, b, r))
        row = {"case": kind, "m": m, "n": n, "k": k, "eager_ms": eager_ms,
               "eager_tflops": flops / eager_ms / 1e9}
        if time.time() - began < options.compile_budget:
            torch._dynamo.reset()
            compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False,
                                     fullgraph=True)
            compile_began = time.time()
            compiled(x, w, b, r)
            torch.cuda.synchronize()
            row["compile_s"] = time.time() - compile_began
            row["compiled_ms"] = median_ms(compiled, (x, w, b, r))
            row["compiled_tflops"] = flops / row["compiled_ms"] / 1e9
            torch.testing.assert_close(compiled(x, w, b, r), fn(x, w, b, r), rtol=2e-2, atol=1.0)
        rows.append(row)
        compiled_text = (f"{row['compiled_ms']:.4f} ms ({row['compiled_tflops']:.1f} TFLOP/s, "
                         f"compiled in {row['compile_s']:.0f} s)" if "compiled_ms" in row
                         else "not compiled (budget spent)")
        print(f"{kind:20s} {m:6d} x {n:6d} x {k:6d}  eager {eager_ms:.4f} ms "
              f"({row['eager_tflops']:.1f} TFLOP/s)  max-autotune {compiled_text}", flush=True)
    if options.json:
        with open(options.json, "w") as out:
            json.dump({"device": device, "torch": torch.__version__, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
