#!/usr/bin/env python3
"""Markdown tables for benchmarks/RESULTS.md from one run of braze_gemm_benchmark
(--benchmark_out=FILE --benchmark_out_format=json) and, optionally, benchmarks/python/gemm_torch.py
(--json FILE) run in the same call on the GPU machine.

    python3 benchmarks/python/gemm_table.py gemm.json [torch.json]
"""

from __future__ import annotations

import json
import math
import re
import sys

LLM_SHAPES = [(m, n, k) for m in (1024, 4096, 16384)
              for n, k in ((4096, 4096), (11008, 4096), (4096, 11008), (8192, 8192),
                           (28672, 8192), (8192, 28672))]
NAMES = {(4096, 4096): "7B attention", (11008, 4096): "7B MLP up", (4096, 11008): "7B MLP down",
         (8192, 8192): "70B attention", (28672, 8192): "70B MLP up",
         (8192, 28672): "70B MLP down"}


def load(path):
    rows = {}
    for bench in json.load(open(path))["benchmarks"]:
        match = re.match(r"(.*)/M:(\d+)/N:(\d+)/K:(\d+)", bench["name"])
        if match and "error_occurred" not in bench:
            rows[(match[1], int(match[2]), int(match[3]), int(match[4]))] = bench
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    rows = load(sys.argv[1])
    ms = lambda name, shape: rows[(name, *shape)]["real_time"]
    tflops = lambda name, shape: rows[(name, *shape)]["TFLOPs"]
    if not any(key[0] == "BM_Gemm/braze" for key in rows):
        sys.exit(f"{sys.argv[1]} has no BM_Gemm/braze rows: run braze_gemm_benchmark unfiltered "
                 "or with --benchmark_filter='BM_Gemm/(braze|cublas)/'")
    print("| M x N x K | shape | Braze TFLOP/s | cuBLAS TFLOP/s | Braze / cuBLAS |")
    print("|---|---|---:|---:|---:|")
    ratios = []
    for shape in [(8192, 8192, 8192)] + LLM_SHAPES:
        braze, cublas = tflops("BM_Gemm/braze", shape), tflops("BM_Gemm/cublas", shape)
        if shape != (8192, 8192, 8192):
            ratios.append(braze / cublas)
        label = "square" if shape == (8192, 8192, 8192) else NAMES[shape[1:]]
        print(f"| {' x '.join(map(str, shape))} | {label} | {braze:.0f} | {cublas:.0f} | "
              f"{braze / cublas:.2f} |")
    print(f"| geometric mean of the 18 LLM shapes | | | | {geomean(ratios):.3f} |")
    print()
    print("| M x N x K | Braze (heuristics) ms | cuBLAS ms | Braze / cuBLAS | best forced params ms |")
    print("|---|---:|---:|---:|---:|")
    for shape in [(1024, 1024, 8192), (512, 512, 16384), (256, 512, 4096)]:
        forced = {name: bench["real_time"] for (name, *s), bench in rows.items()
                  if tuple(s) == shape and name.startswith("BM_Gemm/braze_tile_n")}
        best = min(forced, key=forced.get) if forced else None
        print(f"| {' x '.join(map(str, shape))} | {ms('BM_Gemm/braze', shape) * 1e3:.1f} µs | "
              f"{ms('BM_Gemm/cublas', shape) * 1e3:.1f} µs | "
              f"{ms('BM_Gemm/cublas', shape) / ms('BM_Gemm/braze', shape):.2f} | " +
              (f"{forced[best] * 1e3:.1f} µs ({best.split('braze_')[1]}) |" if best else "— |"))
    # A run filtered to the plain rows (--benchmark_filter='BM_Gemm/(braze|cublas)/') ends here.
    if not any(key[0] == "BM_GemmMatmul/braze" for key in rows):
        return
    print()
    print("| M x N x K | matmul(a, b) Braze ms | cuBLAS ms | ratio | pairs sharing B ms | "
          "one block per tile ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for shape in [(8192, 8192, 8192), (4096, 11008, 4096), (4096, 4096, 4096), (8192, 4096, 14336),
                  (16384, 8192, 1024)]:
        if ("BM_GemmMatmul/braze", *shape) not in rows:
            continue
        pairs = rows.get(("BM_Gemm/braze_pairs_sharing_b", *shape))
        block = rows.get(("BM_Gemm/braze_block_per_tile", *shape))
        cells = [f"{ms('BM_GemmMatmul/braze', shape):.3f}", f"{ms('BM_GemmMatmul/cublas', shape):.3f}",
                 f"{ms('BM_GemmMatmul/cublas', shape) / ms('BM_GemmMatmul/braze', shape):.2f}",
                 f"{pairs['real_time']:.3f}" if pairs else "—",
                 f"{block['real_time']:.3f}" if block else "—"]
        print(f"| {' x '.join(map(str, shape))} | " + " | ".join(cells) + " |")
    print()
    print("| M x N x K | epilogue | Braze GEMM ms | fused ms | cuBLAS + kernel ms | "
          "fused / separate | fused vs plain GEMM |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for epilogue in ("bias_gelu", "bias_gelu_residual"):
        for shape in [(8192, 8192, 8192), (4096, 11008, 4096), (16384, 28672, 8192)]:
            plain = ms("BM_Gemm/braze", shape)
            fused = ms(f"BM_GemmEpilogue/{epilogue}/braze_fused", shape)
            separate = ms(f"BM_GemmEpilogue/{epilogue}/cublas_then_kernel", shape)
            print(f"| {' x '.join(map(str, shape))} | {epilogue} | {plain:.3f} | {fused:.3f} | "
                  f"{separate:.3f} | {separate / fused:.3f}x | {plain / fused:.1%} |")
    if len(sys.argv) > 2:
        torch_rows = json.load(open(sys.argv[2]))["rows"]
        print()
        print("| case | M x N x K | Braze ms | cuBLAS ms (C++) | PyTorch eager ms | "
              "torch.compile max-autotune ms | Braze / max-autotune |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for row in torch_rows:
            shape = (row["m"], row["n"], row["k"])
            if row["case"] == "linear":
                braze, cublas = ms("BM_Gemm/braze", shape), ms("BM_Gemm/cublas", shape)
            else:
                braze = ms(f"BM_GemmEpilogue/{row['case']}/braze_fused", shape)
                cublas = ms(f"BM_GemmEpilogue/{row['case']}/cublas_then_kernel", shape)
            compiled = row.get("compiled_ms")
            print(f"| {row['case']} | {' x '.join(map(str, shape))} | {braze:.4f} | {cublas:.4f} | "
                  f"{row['eager_ms']:.4f} | " + (f"{compiled:.4f} | {compiled / braze:.2f}x |"
                                                 if compiled else "not compiled | — |"))


if __name__ == "__main__":
    main()
