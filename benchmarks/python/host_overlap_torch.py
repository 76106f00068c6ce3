r"""PyTorch peer of the "Host programs" overlap tables (benchmarks/RESULTS.md): a 1 GiB float32
host tensor [16384, 16384] through the GPU, written by hand the way a PyTorch user overlaps
today, beside Braze in the same process on the same tensors.

Each call runs `work` steps of y = sin(y) * 0.5 + y (rowSumsOfWork in
benchmarks/cpp/stream_loop_benchmark.cpp) and brings the result to the host: y itself into a
pinned output (--result whole: the host_round_trip table) or its row sums (--result sums:
host_overlap and host_overlap_pageable). With N chunks over rows, chunk i runs on side stream
i % 4: `.to('cuda', non_blocking=True)`, compute, `out_chunk.copy_(y, non_blocking=True)`;
the side streams wait for the caller's stream first and it waits for them at the end. One
chunk is the single-stream baseline: copy in, compute, copy back. Implementations: torch eager,
torch.compile of the per-chunk compute (compiled in the check run, before timing) and Braze
(fd.execute on the host tensor, every tensor split over rows in N slices on a Stream axis; the
Python API runs Braze's default pool of 4 streams, where the C++ tables used 8). Inputs:
pinned, and with --pageable ordinary memory, fed to torch as is (the driver then copies
synchronously) or staged by hand into a pinned buffer chunk by chunk, and to Braze as is
(Braze stages pageable inputs with threads itself).

Each (work, input, chunks) group gets a fresh random input and a reference (torch on the whole
tensor on the GPU); torch's outputs are filled with NaN before the check run, and Braze's come
from a pool, so a fresh input is what shows a stale one. Timing: after a warmup, CUDA events on
the current stream around the whole call and wall time to torch.cuda.synchronize(); medians of
--repeats; speedup = the same implementation and input at 1 chunk over this.

Floor: the copies. 1 GiB in and 1 GiB back at the pinned copy rates, measured first and
printed (H200 host, 2026-11-29: 19.4 ms each way, 55 GB/s, so 38.9 ms in then back, and 21.5 ms
with both directions at once on two streams). Row sums bring back 64 KiB: their floor is the
copy in alone. A pageable input adds a host copy (about 27 GB/s with Braze's threads, 6-8 GB/s
through the driver on that host).

Braze rows need the package importable; on the GPU machine, from the bundle's wheel:
    python3 -m pip install -q --no-deps --no-index --target /tmp/bs \
        build-gpu-bundle/python-wheel/braze-*.whl && export PYTHONPATH=/tmp/bs
The two commands below (the round-trip and the pageable tables) took 7.5 minutes together on
an H200, torch.compile's compiles included.

    python3 benchmarks/python/host_overlap_torch.py --gib 1 --chunks 1,8,16 --work 1,64
    python3 benchmarks/python/host_overlap_torch.py --result sums --work 0,64 --chunks 1,8 \
        --pageable
"""

import argparse
import statistics
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("host_overlap_torch.py needs PyTorch with CUDA (import torch failed)")
try:
    import braze
    from braze import DataType, FusionDefinition, ParallelType
except ImportError:
    braze = None

COLS = 16384


def compute(x, work, sums):
    y = x
    for _ in range(work):
        y = torch.sin(y) * 0.5 + y
    return y.sum(1) if sums else y


def run_chunked(x, out, chunks, fn, streams, staging=None):
    """x (host) -> out (pinned host) in `chunks` row chunks, chunk i on streams[i % 4]."""
    caller = torch.cuda.current_stream()
    used = streams[:chunks]
    for s in used:
        s.wait_stream(caller)
    xs, outs = x.tensor_split(chunks), out.tensor_split(chunks)
    stages = staging.tensor_split(chunks) if staging is not None else xs
    for i, (xc, oc, sc) in enumerate(zip(xs, outs, stages)):
        with torch.cuda.stream(used[i % len(used)]):
            if staging is not None:
                sc.copy_(xc)  # on the host, while earlier chunks copy and compute
            x_dev = sc.to("cuda", non_blocking=True)
            oc.copy_(fn(x_dev), non_blocking=True)
    for s in used:
        caller.wait_stream(s)


def braze_definition(slices, work, sums):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y, computed = x, []
        for _ in range(work):
            s = fd.ops.sin(y)
            m = fd.ops.mul(s, 0.5)
            y = fd.ops.add(m, y)
            computed += [s, m, y]
        if sums:
            y = fd.ops.sum(y, dims=[1])
            computed.append(y)
        fd.add_output(y)
        for t in computed:
            t.split(0, slices, False)
            t.axis(0).parallelize(ParallelType.Stream)
    return fd


def timed(call, repeats):
    """(median event ms, median wall ms) after one warmup call."""
    call()
    torch.cuda.synchronize()
    events, walls = [], []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        events.append(start.elapsed_time(end))
    return statistics.median(events), statistics.median(walls)


def copy_rates(pinned, repeats):
    """Median ms of a whole copy in, back, and both at once on two streams."""
    dev, dev2 = torch.empty_like(pinned, device="cuda"), torch.empty_like(pinned, device="cuda")
    back = torch.empty_like(pinned).pin_memory()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def both():
        for s in (s1, s2):
            s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s1):
            dev.copy_(pinned, non_blocking=True)
        with torch.cuda.stream(s2):
            back.copy_(dev2, non_blocking=True)
        for s in (s1, s2):
            torch.cuda.current_stream().wait_stream(s)

    return (timed(lambda: dev.copy_(pinned, non_blocking=True), repeats)[0],
            timed(lambda: back.copy_(dev, non_blocking=True), repeats)[0],
            timed(both, repeats)[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gib", type=float, default=1.0, help="input size (rows of 16384 floats)")
    p.add_argument("--chunks", default="1,8,16")
    p.add_argument("--work", default="1,64", help="sin steps per element")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--result", choices=["whole", "sums"], default="whole")
    p.add_argument("--pageable", action="store_true", help="also ordinary (pageable) inputs")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--no-braze", action="store_true")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("host_overlap_torch.py needs a CUDA GPU (torch.cuda.is_available() is False)")
    chunk_counts = [int(c) for c in a.chunks.split(",")]
    works = [int(w) for w in a.work.split(",")]
    sums = a.result == "sums"
    use_braze = braze is not None and not a.no_braze
    if braze is None and not a.no_braze:
        print("(braze is not importable: its rows are left out)")
    rows = int(a.gib * 2**30 / 4 / COLS)
    shape = (rows, COLS)
    gb = rows * COLS * 4 / 1e9
    torch.manual_seed(0)
    x_pinned = torch.empty(shape).pin_memory()
    x_pageable = torch.empty(shape) if a.pageable else None
    out = torch.empty(shape if not sums else (rows,)).pin_memory()
    staging = torch.empty(shape).pin_memory() if a.pageable else None
    streams = [torch.cuda.Stream() for _ in range(4)]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, input {list(shape)} "
          f"float32 ({gb:.2f} GB), result {a.result}")

    h2d, d2h, both = copy_rates(x_pinned, a.repeats)
    print(f"pinned copies: in {h2d:.2f} ms ({gb / h2d * 1e3:.1f} GB/s), back {d2h:.2f} ms "
          f"({gb / d2h * 1e3:.1f} GB/s), both at once {both:.2f} ms; floor per call: "
          + (f"{h2d:.1f} ms" if sums else f"{h2d + d2h:.1f} ms serial, {both:.1f} ms overlapped"))

    compiled = {w: torch.compile(lambda t, w=w: compute(t, w, sums), dynamic=False)
                for w in works} if not a.no_compile else {}
    fds = {}
    results = {}  # (work, input, impl) -> {chunks: wall ms}
    forms = ["pinned"] + (["pageable"] if a.pageable else [])
    for work in works:
        for form in forms:
            for chunks in chunk_counts:
                x = x_pinned if form == "pinned" else x_pageable
                x_pinned.copy_(torch.randn(shape, device="cuda"))  # a fresh input
                if form == "pageable":
                    x_pageable.copy_(x_pinned)
                reference = compute(x_pinned.cuda(), work, sums).cpu()
                fns = {"torch eager": lambda t, w=work: compute(t, w, sums)}
                if work in compiled:
                    fns["torch.compile"] = compiled[work]
                calls = {}
                for name, fn in fns.items():
                    calls[name] = lambda fn=fn: run_chunked(x, out, chunks, fn, streams)
                    if form == "pageable":
                        calls[name + ", staged"] = lambda fn=fn: run_chunked(
                            x, out, chunks, fn, streams, staging)
                if use_braze and (work > 0 or sums):
                    key = (chunks, work)
                    fds.setdefault(key, braze_definition(chunks, work, sums))
                    calls["braze"] = lambda fd=fds[key]: fd.execute([x])[0]
                for name, call in calls.items():
                    out.fill_(float("nan"))
                    result = call()
                    torch.cuda.synchronize()
                    got = result if name == "braze" else out
                    tol = 1e-4 * (COLS if sums else 1)
                    where = f"{name}, {form}, {chunks} chunks, work {work}"
                    torch.testing.assert_close(got, reference, rtol=1e-4, atol=tol,
                                               msg=lambda m: f"{where}: {m}")
                    del result, got
                    event_ms, wall_ms = timed(call, a.repeats)
                    results.setdefault((work, form, name), {})[chunks] = wall_ms
                    print(f"work {work:3d} {form:8s} {name:24s} {chunks:3d} chunks: "
                          f"{event_ms:8.2f} ms events, {wall_ms:8.2f} ms wall, checked")

    moved = "in and back" if not sums else "in"
    print(f"\n=== host overlap, {a.result} result, {gb:.2f} GB {moved}, wall ms per call "
          f"(median of {a.repeats}); speedup: the same row's 1 chunk over N chunks")
    cols = [f"{c} chunk{'s' if c > 1 else ''}" for c in chunk_counts]
    print("| work | input | implementation | " + " | ".join(cols) + " | speedup |")
    print("|---:|---|---|" + "---:|" * len(cols) + "---|")
    for (work, form, name), ms in results.items():
        times = " | ".join(f"{ms[c]:.2f}" if c in ms else "" for c in chunk_counts)
        base = ms.get(1)
        speed = " / ".join(f"{base / ms[c]:.2f}" for c in chunk_counts
                           if c != 1 and base and c in ms)
        print(f"| {work} | {form} | {name} | {times} | {speed or '-'} |")


if __name__ == "__main__":
    main()
