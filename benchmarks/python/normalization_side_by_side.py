#!/usr/bin/env python3
"""Braze, PyTorch eager and torch.compile side by side on row normalizations and a row sum.

Runs on the GPU machine in one call (tools/gpu-test.sh --bench-only runs it when PyTorch is
there). For every op (softmax, layer norm and RMS norm forward and backward, row sum), dtype
(bf16, fp32) and row length N, with M rows so that one M x N input holds at least 256 MiB:

  1. PyTorch worker processes (CPUs - 2 of them) each take every k-th case and compile it with
     torch.compile (default mode, dynamic=False, fullgraph=True) into a fresh Inductor cache;
     the first call of each compiled function is timed: the cold compile cost.
  2. While the workers wait, the C++ benchmark (braze_normalization_benchmark) times Braze as
     users call it, through FusionExecutorCache::run (the scheduler plugins chosen and the
     fusion segmented automatically; a case that runs as several kernels is marked "(k seg)"),
     and the device-to-device copy bandwidth of the same run. With --direct it also times the
     direct path (the expected scheduler forced by name, its kernel launched by a
     KernelExecutor into outputs allocated once), shown in a column of its own.
  3. The workers time eager and compiled PyTorch one worker after another (the GPU runs nothing
     else meanwhile), with the same method as the C++ benchmark: one untimed launch, then CUDA
     events around 10 back-to-back launches, 7 samples, the median; the same byte count
     (every input read once, every output written once).

Eager runs what PyTorch ships for each op (torch.softmax, aten._softmax_backward_data,
aten.native_layer_norm and its backward, aten._fused_rms_norm and its backward when present,
Tensor.sum). torch.compile compiles the same formulas the Braze fusions are written with
(float32 math, results cast back), which is also what Inductor decomposes those ops into.

The merged table is printed, written as JSON and Markdown to --results-dir (and to $OUT when
set), and written into a section of benchmarks/RESULTS.md with the device, the date and the
command. `--from-json FILE` rewrites that section from an earlier run's JSON (for results
brought back from the GPU machine).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import pathlib
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"
SECTION_BEGIN = "<!-- normalization-side-by-side: begin (written by benchmarks/python/normalization_side_by_side.py) -->"
SECTION_END = "<!-- normalization-side-by-side: end -->"

OPS = ["softmax_fwd", "softmax_bwd", "layer_norm_fwd", "layer_norm_bwd", "rms_norm_fwd",
       "rms_norm_bwd", "row_sum"]
FORWARD_OPS = {"softmax_fwd", "layer_norm_fwd", "rms_norm_fwd"}
BACKWARD_OPS = {"softmax_bwd", "layer_norm_bwd", "rms_norm_bwd"}
DTYPES = ["bf16", "fp32"]
ROW_LENGTHS = [256, 1000, 1024, 4096, 8192, 16384, 65536, 262144]
ELEMENT_BYTES = {"bf16": 2, "fp32": 4}
EPS = 1e-5
LAUNCHES_PER_SAMPLE = 10  # as benchmarks/cpp/bandwidth_timing.h
SAMPLES = 7               # as benchmarks/cpp/normalization_benchmark.cpp
COPY_TARGET = 0.90        # forward ops, N >= 4096
COPY_TARGET_MIN_N = 4096
DIRECT_NOISE = 0.03       # FusionExecutorCache::run this much below the direct path is noted


def rows_for(n: int, dtype: str, input_mib: int) -> int:
    """Rows so that one M x N input holds at least input_mib MiB (as the C++ benchmark)."""
    row_bytes = n * ELEMENT_BYTES[dtype]
    return -(-(input_mib << 20) // row_bytes)


def case_name(op: str, dtype: str, n: int) -> str:
    return f"{op}/{dtype}/{n}"


def selected_cases(args) -> list[tuple[str, str, int]]:
    return [(op, dtype, n) for op in args.ops for dtype in args.dtypes for n in args.sizes]


# ---- PyTorch: inputs, eager ops and the formulas torch.compile compiles

def make_inputs(torch, op: str, dtype: str, m: int, n: int, seed: int = 0):
    """The inputs of a case in the fusion's order, uniform in the C++ benchmark's ranges."""
    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    generator = torch.Generator(device="cuda").manual_seed(seed)

    def uniform(shape, low, high, dt=tdtype):
        t = torch.empty(shape, device="cuda", dtype=torch.float32)
        t.uniform_(low, high, generator=generator)
        return t.to(dt)

    x = lambda: uniform((m, n), -2.0, 2.0)
    dy = lambda: uniform((m, n), -1.0, 1.0)
    weight = lambda: uniform((n,), 0.5, 1.5)
    bias = lambda: uniform((n,), -0.5, 0.5)
    mean = lambda: uniform((m,), -0.1, 0.1, torch.float32)
    rstd = lambda: uniform((m,), 0.5, 2.0, torch.float32)
    if op in ("softmax_fwd", "row_sum"):
        return [x()]
    if op == "softmax_bwd":
        return [dy(), uniform((m, n), 0.0, 2.0 / n)]
    if op == "layer_norm_fwd":
        return [x(), weight(), bias()]
    if op == "layer_norm_bwd":
        return [dy(), x(), mean(), rstd(), weight()]
    if op == "rms_norm_fwd":
        return [x(), weight()]
    if op == "rms_norm_bwd":
        return [dy(), x(), rstd(), weight()]
    raise ValueError(op)


def formula(torch, op: str):
    """The op as the Braze fusion defines it: float32 math, results cast back."""

    def softmax_fwd(x):
        xf = x.float()
        e = (xf - xf.amax(-1, keepdim=True)).exp()
        return (e / e.sum(-1, keepdim=True)).to(x.dtype)

    def softmax_bwd(dy, y):
        dyf, yf = dy.float(), y.float()
        return (yf * (dyf - (dyf * yf).sum(-1, keepdim=True))).to(dy.dtype)

    def layer_norm_fwd(x, weight, bias):
        xf = x.float()
        mean = xf.mean(-1)
        centered = xf - mean[:, None]
        rstd = torch.rsqrt((centered * centered).mean(-1) + EPS)
        y = centered * rstd[:, None] * weight.float() + bias.float()
        return y.to(x.dtype), mean, rstd

    def layer_norm_bwd(dy, x, mean, rstd, weight):
        dyf, xf = dy.float(), x.float()
        xhat = (xf - mean[:, None]) * rstd[:, None]
        g = dyf * weight.float()
        dx = rstd[:, None] * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
        return dx.to(x.dtype), (dyf * xhat).sum(0).to(weight.dtype), dyf.sum(0).to(weight.dtype)

    def rms_norm_fwd(x, weight):
        xf = x.float()
        rstd = torch.rsqrt((xf * xf).mean(-1) + EPS)
        return (xf * rstd[:, None] * weight.float()).to(x.dtype), rstd

    def rms_norm_bwd(dy, x, rstd, weight):
        dyf, xf = dy.float(), x.float()
        xhat = xf * rstd[:, None]
        g = dyf * weight.float()
        dx = rstd[:, None] * (g - xhat * (g * xhat).mean(-1, keepdim=True))
        return dx.to(x.dtype), (dyf * xhat).sum(0).to(weight.dtype)

    def row_sum(x):
        return x.float().sum(-1).to(x.dtype)

    return locals()[op]


def eager(torch, op: str, n: int):
    """What PyTorch ships for the op, on the same inputs; returns (callable, description)."""
    aten = torch.ops.aten
    if op == "softmax_fwd":
        return (lambda x: torch.softmax(x, -1)), "torch.softmax"
    if op == "softmax_bwd":
        return (lambda dy, y: aten._softmax_backward_data(dy, y, -1, y.dtype)), \
            "aten._softmax_backward_data"
    if op == "layer_norm_fwd":
        return (lambda x, w, b: aten.native_layer_norm(x, [n], w, b, EPS)), "aten.native_layer_norm"
    if op == "layer_norm_bwd":
        def layer_norm_bwd(dy, x, mean, rstd, w):
            return aten.native_layer_norm_backward(dy, x, [n], mean[:, None], rstd[:, None], w, w,
                                                   [True, True, True])
        return layer_norm_bwd, "aten.native_layer_norm_backward"
    if op == "rms_norm_fwd":
        if hasattr(aten, "_fused_rms_norm"):
            return (lambda x, w: aten._fused_rms_norm(x, [n], w, EPS)), "aten._fused_rms_norm"
        return (lambda x, w: torch.nn.functional.rms_norm(x, [n], w, EPS)), "F.rms_norm"
    if op == "rms_norm_bwd":
        if hasattr(aten, "_fused_rms_norm_backward"):
            return (lambda dy, x, rstd, w: aten._fused_rms_norm_backward(
                dy, x, [n], rstd[:, None], w, [True, True])), "aten._fused_rms_norm_backward"
        return None, "no fused RMS norm backward in this PyTorch"
    if op == "row_sum":
        return (lambda x: x.sum(-1)), "Tensor.sum"
    raise ValueError(op)


def bytes_moved(torch, inputs, outputs) -> int:
    """Every input read once plus every output written once."""
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    return sum(t.numel() * t.element_size() for t in list(inputs) + list(outputs))


def time_median(torch, fn, args) -> float:
    """Seconds per call: the median of SAMPLES samples of LAUNCHES_PER_SAMPLE calls."""
    fn(*args)
    fn(*args)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(SAMPLES):
        fn(*args)  # untimed: keeps the device busy while the timed calls are enqueued
        start.record()
        for _ in range(LAUNCHES_PER_SAMPLE):
            fn(*args)
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 1e3 / LAUNCHES_PER_SAMPLE)
    return statistics.median(samples)


def import_torch():
    # Each worker compiles on one thread: the workers are the parallelism.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    import torch
    import torch._dynamo
    # A worker keeps one compiled graph per shape of each formula: allow that many.
    for name, value in (("cache_size_limit", 256), ("recompile_limit", 256),
                        ("accumulated_cache_size_limit", 4096),
                        ("accumulated_recompile_limit", 4096)):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, value)
    return torch


# ---- PyTorch workers: compile in parallel, then time one at a time
#
# Each worker process takes every k-th case. It compiles its cases (the first call of each
# compiled function, timed: the cold compile cost), reports "ready", and waits. Once every
# worker is ready and the C++ benchmark has run, the workers are told to time their cases one
# after another, so that the GPU runs nothing else while a case is timed.

def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def device_meta(torch) -> dict:
    properties = torch.cuda.get_device_properties(0)
    meta = {"device": f"{properties.name} ({properties.total_memory >> 20} MiB, "
                      f"{properties.multi_processor_count} SMs)",
            "torch": torch.__version__}
    try:
        import triton
        meta["triton"] = triton.__version__
    except ImportError:
        meta["triton"] = "none"
    return meta


def time_case(torch, op: str, dtype: str, n: int, m: int, compiled) -> dict:
    entry = {"M": m, "N": n}
    try:
        inputs = make_inputs(torch, op, dtype, m, n)
        entry["bytes"] = bytes_moved(torch, inputs, formula(torch, op)(*inputs))
    except Exception as error:
        entry["torch_error"] = f"{type(error).__name__}: {error}"[:400]
        return entry
    try:
        fn, entry["eager_op"] = eager(torch, op, n)
        if fn is not None:
            entry["eager_GB/s"] = entry["bytes"] / time_median(torch, fn, inputs) / 1e9
    except Exception as error:
        entry["torch_error"] = f"eager: {type(error).__name__}: {error}"[:400]
    if compiled is not None:
        try:
            entry["compile_GB/s"] = entry["bytes"] / time_median(torch, compiled, inputs) / 1e9
        except Exception as error:
            entry["compile_error"] = f"{type(error).__name__}: {error}"[:400]
    return entry


def worker_main(args) -> int:
    try:
        torch = import_torch()
        meta = device_meta(torch)
    except Exception as error:
        emit({"event": "failed", "error": f"{type(error).__name__}: {error}"[:400]})
        return 1
    cases = selected_cases(args)[args.worker::args.workers]
    compiled, compile_results = {}, {}
    for op, dtype, n in cases:
        name = case_name(op, dtype, n)
        if args.no_compile:
            compile_results[name] = {"error": "not measured (--no-compile)"}
            continue
        if time.time() > args.compile_deadline:
            compile_results[name] = {"error": "dropped: past the time budget"}
            continue
        inputs = None
        try:
            inputs = make_inputs(torch, op, dtype, rows_for(n, dtype, args.input_mib), n)
            fn = torch.compile(formula(torch, op), dynamic=False, fullgraph=True)
            start = time.perf_counter()
            fn(*inputs)
            torch.cuda.synchronize()
            compile_results[name] = {"compile_s": time.perf_counter() - start}
            compiled[name] = fn
        except Exception as error:  # reported in the table; the other cases go on
            compile_results[name] = {"error": f"{type(error).__name__}: {error}"[:400]}
        finally:
            inputs = None
            torch.cuda.empty_cache()
    emit({"event": "ready", "compile": compile_results, **meta})
    if sys.stdin.readline().strip() != "go":
        return 0
    results = {}
    if args.worker == 0:
        source = torch.empty(256 << 18, device="cuda", dtype=torch.float32).uniform_()
        target = torch.empty_like(source)
        seconds = time_median(torch, lambda: target.copy_(source), [])
        results["__copy__"] = {"GB/s": 2 * source.numel() * 4 / seconds / 1e9}
        source = target = None
    for op, dtype, n in cases:
        name = case_name(op, dtype, n)
        results[name] = time_case(torch, op, dtype, n, rows_for(n, dtype, args.input_mib),
                                  compiled.get(name))
        results[name].update({k: v for k, v in compile_results[name].items()})
        torch.cuda.empty_cache()
    emit({"event": "timed", "results": results})
    return 0


class Workers:
    """The PyTorch worker processes and their events."""

    def __init__(self, args, log_dir: str, compile_deadline: float):
        import queue
        import threading
        self.events = queue.Queue()
        self.processes = []
        os.makedirs(log_dir, exist_ok=True)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for i in range(args.workers):
            command = [sys.executable, __file__, "--worker", str(i), "--workers",
                       str(args.workers), "--compile-deadline", str(compile_deadline),
                       "--input-mib", str(args.input_mib), "--ops", *args.ops,
                       "--dtypes", *args.dtypes, "--sizes", *map(str, args.sizes)]
            if args.no_compile:
                command.append("--no-compile")
            process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True,
                                       stderr=open(os.path.join(log_dir, f"worker-{i}.log"), "w"))
            self.processes.append(process)
            threading.Thread(target=self._read, args=(i, process), daemon=True).start()

    def _read(self, i, process):
        for line in process.stdout:
            try:
                self.events.put((i, json.loads(line)))
            except ValueError:
                pass
        self.events.put((i, {"event": "exited", "code": process.wait()}))

    def wait_for(self, kind: str, workers: set, deadline: float) -> dict:
        """Events of `kind` from `workers` until each has sent one, exited or the deadline."""
        import queue
        got, pending = {}, set(workers)
        while pending and time.time() < deadline:
            try:
                i, event = self.events.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                break
            if i in pending and event["event"] in (kind, "failed", "exited"):
                got[i] = event
                pending.discard(i)
        for i in pending:
            got[i] = {"event": "failed", "error": f"no '{kind}' before the time budget ran out"}
        return got

    def go(self, i: int) -> None:
        self.processes[i].stdin.write("go\n")
        self.processes[i].stdin.flush()

    def stop(self) -> None:
        for process in self.processes:
            try:
                process.stdin.close()
            except OSError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


# ---- phase 2: the C++ benchmark

def find_binary(explicit: str | None) -> pathlib.Path | None:
    candidates = []
    if explicit:
        candidates.append(pathlib.Path(explicit))
    bundle = os.environ.get("BRAZE_GPU_BUNDLE")
    if bundle:
        candidates.append(pathlib.Path(bundle) / "bin" / "braze_normalization_benchmark")
    candidates.append(ROOT / "build-gpu-bundle" / "bin" / "braze_normalization_benchmark")
    candidates.append(ROOT / "build" / "benchmarks" / "braze_normalization_benchmark")
    candidates += sorted(ROOT.glob("build*/benchmarks/braze_normalization_benchmark"),
                         key=lambda p: p.stat().st_mtime, reverse=True)
    candidates += sorted(ROOT.glob("build*/bin/braze_normalization_benchmark"),
                         key=lambda p: p.stat().st_mtime, reverse=True)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.resolve()
    return None


def run_braze(args, binary: pathlib.Path, out_dir: str, timeout: float) -> dict:
    """Runs the C++ benchmark on the selected cases; returns its JSON."""
    # Google Benchmark appends "/iterations:7/manual_time" to the names.
    pattern = "^(memcpy_dtod/|({})/({})/({})/)".format(
        "|".join(args.ops), "|".join(args.dtypes), "|".join(map(str, args.sizes)))
    out = os.path.join(out_dir, "braze_normalization_benchmark.json")
    command = [str(binary), f"--benchmark_filter={pattern}", f"--benchmark_out={out}",
               "--benchmark_out_format=json", f"--input_mib={args.input_mib}"]
    if args.direct:
        command.append("--direct")
    env = dict(os.environ)
    # Run from a bundle (bin/, lib/, plugins/): its libraries, plugins and scanner.
    bundle = binary.parent.parent
    if (bundle / "lib").is_dir() and (bundle / "plugins").is_dir():
        env["LD_LIBRARY_PATH"] = f"{bundle / 'lib'}:{env.get('LD_LIBRARY_PATH', '')}"
        # A plugin path the caller set wins (another build of a plugin, compared with this one).
        env.setdefault("BRAZE_PLUGIN_PATH", str(bundle / "plugins"))
        scanner = bundle / "bin" / "braze-plugin-scanner"
        if scanner.is_file():
            env.setdefault("BRAZE_PLUGIN_SCANNER", str(scanner))
    log(f"running {shlex.join(command)}")
    try:
        completed = subprocess.run(command, env=env, capture_output=True, text=True,
                                   timeout=timeout)
        pathlib.Path(out_dir, "braze_normalization_benchmark.log").write_text(
            completed.stdout + completed.stderr)
        if completed.returncode != 0:
            log(f"the C++ benchmark exited {completed.returncode}: {completed.stderr[-600:]}")
    except subprocess.TimeoutExpired:
        log(f"the C++ benchmark ran past {timeout:.0f} s and was stopped")
    try:
        return json.loads(pathlib.Path(out).read_text())
    except (OSError, ValueError) as error:
        log(f"no JSON from the C++ benchmark: {error}")
        return {}


BRAZE_KEYS = ("GB/s", "of_copy", "bytes", "M", "N", "median_us", "host_us", "compile_s", "label",
              "segments", "kernels", "expected_scheduler")


def braze_results(data: dict) -> tuple[dict, dict]:
    """Per case: GB/s, of_copy, bytes, M, median_us, segments, label or error, and under
    "direct" the same of its direct case (--direct); and the copy's entry."""
    cases, direct, copy = {}, {}, {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b.get("name", "")).split("/iterations:")[0]
        if b.get("aggregate_name") not in (None, "median"):
            continue
        if name.startswith("memcpy_dtod"):
            copy = {"GB/s": b.get("GB/s"), "median_us": b.get("median_us"),
                    "error": b.get("error_message") if b.get("error_occurred") else None}
            continue
        entry = ({"error": b.get("error_message", "error")} if b.get("error_occurred") else
                 {key: b.get(key) for key in BRAZE_KEYS})
        if name.endswith("/direct"):
            direct[name[:-len("/direct")]] = entry
        else:
            cases[name] = entry
    for name, entry in direct.items():
        cases.setdefault(name, {"error": "no result"})["direct"] = entry
    return cases, copy


# ---- the table

def merge(args, braze: dict, torch_results: dict) -> list[dict]:
    rows = []
    for op, dtype, n in selected_cases(args):
        name = case_name(op, dtype, n)
        b = braze.get(name, {"error": "not run (no C++ benchmark binary or no result)"})
        t = torch_results.get(name, {})
        row = {"case": name, "op": op, "dtype": dtype, "N": n,
               "M": t.get("M") or b.get("M") or rows_for(n, dtype, args.input_mib),
               "braze_GB/s": b.get("GB/s"), "of_copy": b.get("of_copy"),
               "braze_error": b.get("error"), "braze_label": b.get("label"),
               "braze_compile_s": b.get("compile_s"),
               "braze_bytes": b.get("bytes"), "torch_bytes": t.get("bytes"),
               "eager_GB/s": t.get("eager_GB/s"), "eager_op": t.get("eager_op"),
               "braze_median_us": b.get("median_us"), "braze_host_us": b.get("host_us"),
               "braze_segments": b.get("segments"), "braze_kernels": b.get("kernels"),
               "braze_expected_scheduler": b.get("expected_scheduler"),
               "direct_GB/s": b.get("direct", {}).get("GB/s"),
               "direct_error": b.get("direct", {}).get("error"),
               "direct_host_us": b.get("direct", {}).get("host_us"),
               "compile_GB/s": t.get("compile_GB/s"),
               "compile_error": t.get("compile_error") or t.get("error"),
               "compile_cold_s": t.get("compile_s"), "torch_error": t.get("torch_error")}
        if row["braze_GB/s"] and row["compile_GB/s"]:
            row["ratio"] = row["braze_GB/s"] / row["compile_GB/s"]
        row["missed"] = missed_targets(row)
        rows.append(row)
    return rows


def missed_targets(row: dict) -> list[str]:
    op, n = row["op"], row["N"]
    if op not in FORWARD_OPS and op not in BACKWARD_OPS:
        return []
    missed = []
    if row["braze_GB/s"] is None:
        return ["no Braze result"]
    if op in FORWARD_OPS and n >= COPY_TARGET_MIN_N and row["of_copy"] is not None \
            and row["of_copy"] < COPY_TARGET:
        missed.append(f"{100 * row['of_copy']:.0f}% of copy < {100 * COPY_TARGET:.0f}%")
    if row.get("ratio") is not None and row["ratio"] < 1.0:
        missed.append(f"{row['ratio']:.2f}x torch.compile < 1.0x")
    elif row.get("ratio") is None:
        missed.append("no torch.compile figure to compare with")
    return missed


def fmt(value, spec, empty="-"):
    return empty if value is None else format(value, spec)


def braze_cell(row: dict) -> str:
    """Braze's GB/s, marked "(k seg)" when the fusion ran as k > 1 segments."""
    if row["braze_error"] is not None:
        return "error"
    segments = row.get("braze_segments")
    return fmt(row["braze_GB/s"], ".0f") + (f" ({segments:.0f} seg)" if segments and segments > 1
                                            else "")


def has_direct(rows: list[dict]) -> bool:
    """Whether the run timed the direct path too (--direct)."""
    return any(r.get("direct_GB/s") is not None or r.get("direct_error") for r in rows)


def direct_cell(row: dict) -> str:
    return "error" if row.get("direct_error") else fmt(row.get("direct_GB/s"), ".0f")


def table_lines(rows: list[dict]) -> list[str]:
    direct = has_direct(rows)
    lines = ["| op | dtype | M | N | Braze GB/s " + ("| direct GB/s " if direct else "") +
             "| % of copy | eager GB/s | compile GB/s | Braze / compile | targets |",
             "|---|---|---:|---:|---:|" + ("---:|" if direct else "") + "---:|---:|---:|---:|---|"]
    for r in rows:
        compiled = fmt(r["compile_GB/s"], ".0f") if r["compile_error"] is None else "-"
        target = "—" if r["op"] not in FORWARD_OPS | BACKWARD_OPS else (
            "missed: " + "; ".join(r["missed"]) if r["missed"] else "met")
        lines.append(f"| {r['op']} | {r['dtype']} | {r['M']} | {r['N']} | {braze_cell(r)} "
                     + (f"| {direct_cell(r)} " if direct else "") +
                     f"| {fmt(r['of_copy'] and 100 * r['of_copy'], '.1f')} "
                     f"| {fmt(r['eager_GB/s'], '.0f')} | {compiled} "
                     f"| {fmt(r.get('ratio'), '.2f')} | {target} |")
    return lines


def short_schedule(label: str | None) -> str:
    """The schedulers' params summaries without the schedulers' names and versions (a label is
    "id@version: params", or "k segments: " and such parts joined with "; ")."""
    label = re.sub(r"^\d+ segments: ", "", label or "")
    return re.sub(r"(^|; )\S+@\S+: ", r"\1", label)


def error_lines(rows: list[dict], key: str, what: str) -> list[str]:
    """One line per reason among the rows' `key` errors: a missing scheduler fails every case
    alike. Library paths and tensor names (T12) do not make a reason different."""
    errors = {}
    for r in rows:
        if r.get(key):
            message = re.sub(r" \(/[^)]*\)", "", " ".join(r[key].split()))
            errors.setdefault(re.sub(r"\bT\d+\b", "T", message), (message, []))[1].append(r["case"])
    lines = []
    for message, cases in errors.values():
        shown = ", ".join(cases[:4]) + (f" and {len(cases) - 4} more" if len(cases) > 4 else "")
        lines.append(f"- {what} ({shown}): {message[:700]}")
    return lines


def notes_lines(rows: list[dict]) -> list[str]:
    lines = error_lines(rows, "braze_error", "Braze error")
    lines += error_lines(rows, "direct_error", "Braze error on the direct path")
    for r in rows:
        if r["compile_error"] and "--no-compile" not in r["compile_error"]:
            lines.append(f"- torch.compile {r['case']}: {' '.join(r['compile_error'].split())[:200]}")
        if r["torch_error"]:
            lines.append(f"- PyTorch {r['case']}: {' '.join(r['torch_error'].split())[:200]}")
        if r.get("braze_host_us") and r.get("braze_median_us") and \
                r["braze_host_us"] > 0.8 * r["braze_median_us"]:
            # Results from before the executor cache timed KernelExecutor::run.
            call = ("FusionExecutorCache::run" if r.get("braze_segments") is not None
                    else "KernelExecutor::run")
            lines.append(f"- Braze {r['case']}: the host took {r['braze_host_us']:.0f} us per "
                         f"{call} for a {r['braze_median_us']:.0f} us run, so the launches "
                         "may have waited for the host")
        if r.get("braze_expected_scheduler") == 0:
            lines.append(f"- Braze {r['case']}: one kernel, but not of the expected scheduler "
                         f"({r['braze_label']})")
        if r.get("braze_GB/s") and r.get("direct_GB/s") and \
                r["braze_GB/s"] < (1 - DIRECT_NOISE) * r["direct_GB/s"]:
            below = 100 * (1 - r["braze_GB/s"] / r["direct_GB/s"])
            lines.append(f"- Braze {r['case']}: FusionExecutorCache::run {r['braze_GB/s']:.0f} "
                         f"GB/s, {below:.1f}% below the direct path's {r['direct_GB/s']:.0f} GB/s")
        if r["braze_bytes"] and r["torch_bytes"] and int(r["braze_bytes"]) != int(r["torch_bytes"]):
            lines.append(f"- {r['case']}: byte counts differ (Braze {int(r['braze_bytes'])}, "
                         f"PyTorch {int(r['torch_bytes'])})")
    return lines


def missed_lines(rows: list[dict]) -> list[str]:
    lines = []
    # Cases without a Braze figure, one line per op.
    without = {}
    for r in rows:
        if r["missed"] == ["no Braze result"]:
            without.setdefault(r["op"], []).append(f"{r['dtype']}/{r['N']}")
    for op, cases in without.items():
        every = len(cases) == sum(1 for r in rows if r["op"] == op)
        lines.append(f"- {op} {'(every dtype and N)' if every else ', '.join(cases)}: no Braze "
                     "figure (the error is under Notes)")
    for r in rows:
        if r["missed"] and r["missed"] != ["no Braze result"]:
            schedule = f" [{short_schedule(r['braze_label'])}]" if r.get("braze_label") else ""
            lines.append(f"- {r['case']} (M={r['M']}): {'; '.join(r['missed'])}{schedule}")
    return lines


def braze_path_text(meta: dict, rows: list[dict]) -> str:
    """How Braze was called, as a sentence and a space (results from before the executor cache
    say nothing of it)."""
    if meta.get("braze_path") != "FusionExecutorCache::run":
        return ""
    return ("Braze runs as users call it, through FusionExecutorCache::run (scheduler chosen and "
            "fusion segmented automatically, outputs allocated from its stream-ordered pool by "
            "every call); '(k seg)' marks a fusion that ran as k kernels" +
            ("; 'direct' forces the expected scheduler by name and launches its kernel with a "
             "KernelExecutor into outputs allocated once" if has_direct(rows) else "") + ". ")


def report_markdown(report: dict) -> str:
    rows = report["rows"]
    meta = report["meta"]
    cold = [r["compile_cold_s"] for r in rows if r.get("compile_cold_s")]
    braze_compile = [r["braze_compile_s"] for r in rows if r.get("braze_compile_s")]
    eager_ops = sorted({f"{r['op']}: {r['eager_op']}" for r in rows if r.get("eager_op")})
    out = [SECTION_BEGIN,
           "## Normalizations and row sum: Braze, PyTorch eager and torch.compile",
           "",
           f"Device: {meta.get('device', '?')}, {meta.get('date', '?')}; PyTorch "
           f"{meta.get('torch', '?')}, Triton {meta.get('triton', '?')}.",
           "Command (on the GPU machine, from a bundle of the binaries and plugins built here):",
           "",
           "```sh",
           meta.get("command", "?"),
           "```",
           "",
           "Every figure counts the bytes that must move (every input read once, every output "
           "written once) over the median of 7 samples, each 10 back-to-back launches between "
           "CUDA events after one untimed launch; M makes one M x N input at least "
           f"{meta.get('input_mib', 256)} MiB. {braze_path_text(meta, rows)}'% of copy' is "
           "Braze's bandwidth over the "
           "device-to-device copy measured in the same run "
           f"(cuMemcpyDtoDAsync, {fmt(meta.get('braze_copy_GB/s'), '.0f')} GB/s; PyTorch's "
           f"copy_ gave {fmt(meta.get('torch_copy_GB/s'), '.0f')} GB/s). torch.compile: default "
           "mode, dynamic=False, fullgraph=True, on the same float32 formulas the Braze fusions "
           "are written with (layer norm's variance as the mean of squared deviations, two "
           "passes over the row); eager runs PyTorch's own kernels "
           f"({'; '.join(eager_ops) if eager_ops else 'none ran'}).",
           f"Compile cost: torch.compile {fmt(sum(cold) if cold else None, '.0f')} s cold for "
           f"{len(cold)} cases (median {fmt(statistics.median(cold) if cold else None, '.1f')} s "
           "per case, first call included; "
           f"{meta.get('workers', '?')} processes in parallel, "
           f"{fmt(meta.get('compile_wall_s'), '.0f')} s of wall time); Braze (scheduling, code "
           f"generation, NVRTC) {fmt(sum(braze_compile) if braze_compile else None, '.1f')} s "
           f"for {len(braze_compile)} cases. Whole run: {fmt(meta.get('total_s'), '.0f')} s.",
           "",
           "Targets: forward softmax and norms >= 90% of copy for N >= 4096 and >= 1.0x "
           "torch.compile at every N; backward >= 1.0x torch.compile (row sum: none).",
           ""]
    out += table_lines(rows)
    if meta.get("note"):
        out += ["", meta["note"]]
    missed = missed_lines(rows)
    out += ["", "Targets missed (with Braze's schedule):" if missed else "Targets missed: none."]
    out += missed
    notes = notes_lines(rows)
    if notes:
        out += ["", "Notes:"] + notes
    if meta.get("dropped"):
        out += ["", f"Dropped: {meta['dropped']}"]
    out.append(SECTION_END)
    return "\n".join(out) + "\n"


def write_results_md(markdown: str, path: pathlib.Path) -> None:
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(SECTION_BEGIN) + ".*?" + re.escape(SECTION_END) + "\n?",
                         re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: markdown, text)
    else:
        text = text.rstrip("\n") + "\n\n" + markdown
    path.write_text(text)


def print_report(report: dict) -> None:
    rows = report["rows"]
    print()
    print("=== normalizations: Braze, PyTorch eager, torch.compile "
          f"({report['meta'].get('device', '?')})")
    direct = has_direct(rows)
    print(f"{'op':<15} {'dtype':<5} {'M':>8} {'N':>7} {'Braze GB/s':>16} "
          + (f"{'direct':>7} " if direct else "") +
          f"{'% copy':>7} {'eager':>7} {'compile':>7} {'ratio':>6}  targets")
    for r in rows:
        target = "" if r["op"] not in FORWARD_OPS | BACKWARD_OPS else (
            "MISSED: " + "; ".join(r["missed"]) if r["missed"] else "met")
        print(f"{r['op']:<15} {r['dtype']:<5} {r['M']:>8} {r['N']:>7} {braze_cell(r):>16} "
              + (f"{direct_cell(r):>7} " if direct else "") +
              f"{fmt(r['of_copy'] and 100 * r['of_copy'], '.1f'):>7} "
              f"{fmt(r['eager_GB/s'], '.0f'):>7} {fmt(r['compile_GB/s'], '.0f'):>7} "
              f"{fmt(r.get('ratio'), '.2f'):>6}  {target}")
    notes = notes_lines(rows)
    if notes:
        print("\n".join(notes))
    missed = [r for r in rows if r["missed"]]
    print(f"targets missed: {len(missed)} of "
          f"{sum(1 for r in rows if r['op'] in FORWARD_OPS | BACKWARD_OPS)} cases with targets")


def log(message: str) -> None:
    print(f"side-by-side: {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="braze_normalization_benchmark (default: found in "
                        "$BRAZE_GPU_BUNDLE/bin, build-gpu-bundle/bin or build*/benchmarks)")
    parser.add_argument("--ops", nargs="+", default=OPS, choices=OPS)
    parser.add_argument("--dtypes", nargs="+", default=DTYPES, choices=DTYPES)
    parser.add_argument("--sizes", nargs="+", type=int, default=ROW_LENGTHS, help="row lengths N")
    parser.add_argument("--input-mib", type=int, default=256)
    parser.add_argument("--workers", type=int, default=max(1, min(14, (os.cpu_count() or 2) - 2)),
                        help="PyTorch processes compiling in parallel (default: CPUs - 2, "
                        "at most 14)")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--direct", action="store_true",
                        help="also time Braze's direct path (the expected scheduler forced by "
                        "name, the kernel launched by a KernelExecutor) next to "
                        "FusionExecutorCache::run, in a column of its own")
    parser.add_argument("--budget-s", type=float, default=450.0,
                        help="the whole run's time budget: torch.compile starts no case past "
                        "45%% of it, the C++ benchmark gets what is left but 30 s")
    parser.add_argument("--results-dir", help="where the JSON, logs and Markdown go "
                        "(default: a temporary folder; also $OUT when set)")
    parser.add_argument("--results-md", default=str(RESULTS_MD),
                        help="the Markdown file whose section is written ('' for none)")
    parser.add_argument("--command", help="the command shown in the results "
                        "(default: this script's command line)")
    parser.add_argument("--from-json", help="write the results section from an earlier run's "
                        "JSON, without running anything")
    parser.add_argument("--note", help="a paragraph added to the results section")
    # Internal: one PyTorch worker.
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--compile-deadline", type=float, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        return worker_main(args)
    if args.from_json:
        report = json.loads(pathlib.Path(args.from_json).read_text())
        if args.note:
            report["meta"]["note"] = args.note
        if args.command:
            report["meta"]["command"] = args.command
        print_report(report)
        if args.results_md:
            write_results_md(report_markdown(report), pathlib.Path(args.results_md))
            log(f"wrote the section of {args.results_md}")
        return 0

    started = time.time()
    deadline = started + args.budget_s
    elapsed = lambda: f"{time.time() - started:.0f} s"
    results_dir = args.results_dir or tempfile.mkdtemp(prefix="braze-side-by-side-")
    os.makedirs(results_dir, exist_ok=True)
    meta = {"date": datetime.date.today().isoformat(), "input_mib": args.input_mib,
            "workers": args.workers,
            "command": args.command or shlex.join([sys.argv[0], *argv]), "note": args.note}
    dropped = []
    cases = selected_cases(args)

    # Phase 1: PyTorch workers compile, in parallel, into a fresh Inductor cache (cold cost).
    workers = None
    ready = {}
    try:
        import torch  # noqa: F401 (only whether it is there; the workers use it)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="braze-inductor-cache-")
        log(f"{len(cases)} cases; {args.workers} PyTorch workers compiling")
        workers = Workers(args, os.path.join(results_dir, "torch-workers"),
                          started + 0.45 * args.budget_s)
        # A compilation under way at the compile deadline still finishes.
        ready = workers.wait_for("ready", set(range(args.workers)),
                                 started + 0.6 * args.budget_s)
        meta["compile_wall_s"] = time.time() - started
        for event in ready.values():
            for key in ("device", "torch", "triton"):
                meta.setdefault(key, event.get(key))
        failed = {i: e.get("error") for i, e in ready.items() if e["event"] != "ready"}
        if failed:
            log(f"PyTorch workers that failed: {failed}")
        log(f"PyTorch compiled ({elapsed()})")
    except ImportError as error:
        dropped.append(f"PyTorch eager and torch.compile ({error})")
        log(f"no PyTorch timings: {error}")

    # Phase 2: Braze, with the GPU to itself (the workers wait).
    binary = find_binary(args.binary)
    braze, braze_copy = {}, {}
    if binary is None:
        dropped.append("Braze (no braze_normalization_benchmark binary found)")
    else:
        # What is left of the budget, less what the PyTorch timings need (seconds).
        timeout = max(60.0, deadline - time.time() - 30)
        braze, braze_copy = braze_results(run_braze(args, binary, results_dir, timeout))
        meta["braze_binary"] = str(binary)
        meta["braze_path"] = "FusionExecutorCache::run"
        log(f"Braze done ({elapsed()})")
    meta["braze_copy_GB/s"] = braze_copy.get("GB/s")

    # Phase 3: the workers time their cases, one worker at a time.
    torch_results = {}
    if workers is not None:
        for i, event in sorted(ready.items()):
            if event["event"] != "ready":
                continue
            workers.go(i)
            timed = workers.wait_for("timed", {i}, max(deadline, time.time() + 10))[i]
            if timed["event"] == "timed":
                torch_results.update(timed["results"])
            else:
                log(f"PyTorch worker {i} did not time its cases: {timed.get('error', timed)}")
        workers.stop()
        log(f"PyTorch timed ({elapsed()})")
        for i, event in ready.items():
            if event["event"] != "ready":
                for op, dtype, n in cases[i::args.workers]:
                    torch_results.setdefault(case_name(op, dtype, n), {
                        "torch_error": f"worker {i}: {event.get('error', 'failed')}"})
        meta["torch_copy_GB/s"] = torch_results.pop("__copy__", {}).get("GB/s")
        late = [name for name, t in torch_results.items()
                if "past the time budget" in (t.get("error") or "")]
        if late:
            dropped.append(f"torch.compile of {len(late)} cases past the compile budget "
                           f"({0.45 * args.budget_s:.0f} s): {', '.join(late)}")
    meta["total_s"] = time.time() - started
    meta["dropped"] = "; ".join(dropped)

    report = {"meta": meta, "rows": merge(args, braze, torch_results)}
    print_report(report)
    markdown = report_markdown(report)
    outputs = [results_dir] + ([os.environ["OUT"]] if os.environ.get("OUT") else [])
    for folder in outputs:
        pathlib.Path(folder, "normalization_side_by_side.json").write_text(
            json.dumps(report, indent=1))
        pathlib.Path(folder, "normalization_side_by_side.md").write_text(markdown)
    if args.results_md:
        write_results_md(markdown, pathlib.Path(args.results_md))
        log(f"wrote the section of {args.results_md}")
    log(f"done in {elapsed()}; JSON and Markdown in {', '.join(outputs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
