"""nvFuser's own normalization definitions, unchanged, through Braze's FusionDefinition and
through nvFuser's, in one run on the GPU: do they run, how many kernels Braze makes of them,
do the two agree, and how long each takes.

    python3 benchmarks/python/nvfuser_definitions.py DEFINITIONS_DIR [--json FILE]

DEFINITIONS_DIR holds nvFuser's benchmark files (test_softmax_fwd.py, test_layernorm_bwd.py, ...;
../shared/peers copies them into .peer-wheels/nvfuser_benchmarks). Only their `*_fusion`
functions are taken and executed with Braze's FusionDefinition and DataType in scope, so what
runs is exactly what an nvFuser user wrote. nvFuser's own column is filled where
`nvfuser_direct` imports (source .peer-wheels/nvfuser-env.sh first). Kernel time: CUDA events
around 10 back-to-back executes, median of 7, after one untimed call.
"""

import argparse
import ast
import json
import pathlib
import statistics
import sys

import torch

import braze

FUNCTIONS = [
    ("test_softmax_fwd", "softmax_fwd_fusion"),
    ("test_softmax_bwd", "softmax_bwd_fusion"),
    ("test_layernorm_fwd", "layernorm_fwd_fusion"),
    ("test_layernorm_bwd", "layernorm_bwd_fusion"),
    ("test_rmsnorm_fwd", "rmsnorm_fwd_fusion"),
    ("test_rmsnorm_bwd", "rmsnorm_bwd_fusion"),
    ("test_reduction", "reduction_fusion"),
]
SHAPES = [(16384, 1024), (4096, 4096), (2048, 16384), (256, 65536)]


def load_definitions(folder, namespace):
    """The `*_fusion` functions of nvFuser's files, defined in `namespace`."""
    for file_name, function in FUNCTIONS:
        source = (folder / f"{file_name}.py").read_text()
        node = next(n for n in ast.parse(source).body
                    if isinstance(n, ast.FunctionDef) and n.name == function)
        exec(compile(ast.Module([node], []), file_name, "exec"), namespace)


def cases(ns, data_type, dtype, rows, n):
    """(name, define(fd), inputs) for each definition, inputs as nvFuser's benchmarks make them."""
    x = lambda *s: torch.randn(*s, device="cuda", dtype=dtype)
    positive = lambda *s: torch.rand(*s, device="cuda", dtype=torch.float32) + 0.5
    return [
        ("softmax_fwd", lambda fd: ns["softmax_fwd_fusion"](fd, data_type, 1), [x(rows, n)]),
        ("softmax_bwd", lambda fd: ns["softmax_bwd_fusion"](fd, data_type, 1),
         [x(rows, n), x(rows, n)]),
        ("layer_norm_fwd", lambda fd: ns["layernorm_fwd_fusion"](fd, data_type),
         [x(rows, n), x(n), x(n)]),
        ("layer_norm_bwd", lambda fd: ns["layernorm_bwd_fusion"](fd, data_type),
         [x(rows, n), x(rows, n), positive(rows), positive(rows, 1), x(n)]),
        ("rms_norm_fwd", lambda fd: ns["rmsnorm_fwd_fusion"](fd, data_type), [x(rows, n), x(n)]),
        ("rms_norm_bwd", lambda fd: ns["rmsnorm_bwd_fusion"](fd, data_type),
         [x(rows, n), positive(rows, 1), x(rows, n), x(n)]),
        ("row_sum", lambda fd: ns["reduction_fusion"](fd, data_type, 1), [x(rows, n)]),
    ]


def median_us(fn, launches=10, samples=7):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(launches):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / launches)
    return statistics.median(times)


def agree(ours, theirs):
    """Largest difference relative to the larger output's scale, over every output."""
    worst = 0.0
    for a, b in zip(ours, theirs):
        a, b = a.float(), b.float()
        scale = max(1.0, b.abs().max().item())
        worst = max(worst, (a - b).abs().max().item() / scale)
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("definitions", type=pathlib.Path)
    parser.add_argument("--json")
    args = parser.parse_args()

    braze_ns = dict(FusionDefinition=braze.FusionDefinition, DataType=braze.DataType,
                    PROMOTE_DTYPES=[braze.DataType.BFloat16, braze.DataType.Half])
    load_definitions(args.definitions, braze_ns)
    try:
        import nvfuser_direct
        nvf_ns = dict(FusionDefinition=nvfuser_direct.FusionDefinition,
                      DataType=nvfuser_direct.DataType,
                      PROMOTE_DTYPES=[nvfuser_direct.DataType.BFloat16,
                                      nvfuser_direct.DataType.Half])
        load_definitions(args.definitions, nvf_ns)
    except ImportError:
        nvf_ns = None

    rows_out = []
    for dtype_name, dtype in [("bf16", torch.bfloat16), ("fp32", torch.float32)]:
        for rows, n in SHAPES:
            ours_cases = cases(braze_ns, braze.DataType.BFloat16 if dtype_name == "bf16"
                               else braze.DataType.Float, dtype, rows, n)
            for name, define, inputs in ours_cases:
                row = {"op": name, "dtype": dtype_name, "rows": rows, "n": n}
                try:
                    with braze.FusionDefinition() as fd:
                        define(fd)
                    outputs = fd.execute(inputs)
                    row["kernels"] = len(fd.last_runtime().splitlines())
                    row["braze_us"] = median_us(lambda: fd.execute(inputs))
                except Exception as error:  # a definition Braze cannot run is a result too
                    row["error"] = str(error).splitlines()[0][:200]
                    outputs = None
                if nvf_ns is not None:
                    nvf_define = {c[0]: c[1] for c in cases(
                        nvf_ns, nvfuser_direct.DataType.BFloat16 if dtype_name == "bf16"
                        else nvfuser_direct.DataType.Float, dtype, 1, 1)}[name]
                    with nvfuser_direct.FusionDefinition() as nfd:
                        nvf_define(nfd)
                    theirs = nfd.execute(inputs)
                    row["nvfuser_us"] = median_us(lambda: nfd.execute(inputs))
                    if outputs is not None:
                        row["max_rel_diff"] = agree(outputs, theirs)
                rows_out.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)

    device = torch.cuda.get_device_name()
    print(f"=== nvFuser's definitions unchanged through Braze, {device}")
    print(f"{'op':16s} {'dtype':5s} {'rows x n':>14s} {'kernels':>7s} {'braze us':>9s} "
          f"{'nvfuser us':>10s} {'speedup':>7s} {'max rel diff':>12s}")
    for r in rows_out:
        shape = f"{r['rows']}x{r['n']}"
        if "error" in r:
            print(f"{r['op']:16s} {r['dtype']:5s} {shape:>14s}  FAILED: {r['error']}")
            continue
        nvf = r.get("nvfuser_us")
        speed = f"{nvf / r['braze_us']:.2f}" if nvf else "-"
        diff = f"{r['max_rel_diff']:.1e}" if "max_rel_diff" in r else "-"
        print(f"{r['op']:16s} {r['dtype']:5s} {shape:>14s} {r['kernels']:7d} "
              f"{r['braze_us']:9.1f} {nvf if nvf else float('nan'):10.1f} {speed:>7s} {diff:>12s}")
    failed = sum("error" in r for r in rows_out)
    print(f"{len(rows_out) - failed} of {len(rows_out)} ran")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": device, "rows": rows_out}, out, indent=1)


if __name__ == "__main__":
    main()
