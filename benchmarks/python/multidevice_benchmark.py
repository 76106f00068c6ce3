"""Sharded fusions on several GPUs, each against the same work in PyTorch (and nvFuser where its
wheel was set up), in one run, one process per GPU:

    torchrun --nproc-per-node N benchmarks/python/multidevice_benchmark.py [--quick] [--json F]

Cases (bf16, tensor-parallel MLP sizes: hidden 8192, intermediate 28672 split over the GPUs):
- collectives: allreduce and allgather bus bandwidth, 1 MiB to 1 GiB, Braze's communicator
  (braze.multidevice.all_reduce / all_gather) vs torch.distributed on the same sizes;
- ag_gemm: tokens split over the GPUs (sequence parallel), gathered, multiplied by this rank's
  column block of W1 ([M, 8192] x [8192, 28672 / n]); Braze without a stream axis, then with the
  tokens in c chunks (the gather of chunk i + 1 overlaps the matmul of chunk i), c swept;
  PyTorch: all_gather_into_tensor then torch.matmul; nvFuser's MultiDeviceExecutor likewise;
- gemm_rs: this rank's row block of W2 ([M, 28672 / n] x [28672 / n, 8192]), partial sums
  reduce-scattered by tokens; the same variants;
- mlp: a tensor-parallel MLP block forward: RMS norm, x W1 (column-parallel), SiLU, W2
  (row-parallel), allreduce; PyTorch eager with dist.all_reduce;
- mlp_bwd: its backward (forward recomputed; dx, dg, dW1, dW2, the input gradient allreduced);
  PyTorch eager autograd with dist.all_reduce.
The Braze definitions are in tp_definitions.py beside this script.

Times are the slowest rank's median over the timed iterations (CUDA events around each call,
host included). Rank 0 prints one table; --json writes the rows.
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer iterations")
parser.add_argument("--json", default=None)
parser.add_argument("--chunks", default="2,4,8")
parser.add_argument("--tokens", default="4096,16384")
parser.add_argument("--skip", default="", help="comma-separated cases to skip")
parser.add_argument("--nvfuser", action="store_true", help="also run nvFuser's executor")
parser.add_argument("--only", default="", help="run only these cases (collectives, ag_gemm, "
                    "gemm_rs, mlp, mlp_bwd, nvfuser)")
parser.add_argument("--breakdown", action="store_true",
                    help="print the MLP blocks' per-kernel times: Braze's traced regions and "
                    "steps beside PyTorch's profiled kernels (rank 0)")
args = parser.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
device = torch.device("cuda", local)
dist.init_process_group("nccl", device_id=device)

SKIP = set(filter(None, args.skip.split(",")))
if args.only:
    SKIP = {"collectives", "ag_gemm", "gemm_rs", "mlp", "mlp_bwd", "nvfuser"} - set(
        args.only.split(","))
elif args.nvfuser is False:
    SKIP.add("nvfuser")
if SKIP >= {"collectives", "ag_gemm", "gemm_rs", "mlp", "mlp_bwd"}:
    braze = comm = mesh = None  # nvFuser alone: Braze stays out of the process
else:
    import braze
    import tp_definitions as tp  # beside this script; checked on the CPU by test_multidevice.py
    from braze import DataType, FusionDefinition
    from braze.multidevice import DeviceMesh

    comm = braze.multidevice.communicator()  # through the default process group's store
    mesh = DeviceMesh(list(range(world)))
HIDDEN, INTER = (1024, 4096) if args.quick else (8192, 28672)
TOKENS = [int(t) for t in args.tokens.split(",")]
if args.quick:
    TOKENS = [t // 8 for t in TOKENS]
CHUNKS = [int(c) for c in args.chunks.split(",")]
WARMUP, ITERS = (2, 5) if args.quick else (3, 10)
rows = []


def slowest(ms):
    t = torch.tensor([ms], device=device, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def timed(fn, iters=ITERS, warmup=WARMUP):
    """The slowest rank's median milliseconds per call of fn."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return slowest(statistics.median(times))


def host_time(fn, iters=ITERS):
    """This rank's median host milliseconds per call of fn, each started with the GPU idle: what
    the call costs before its last launch is enqueued (fd.execute returns without waiting)."""
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times)


def report(case, size, variant, ms, flops=0.0, busbw=0.0, error=None, note=""):
    row = dict(case=case, size=size, variant=variant, ms=ms, devices=world)
    if flops:
        row["tflops"] = flops / ms / 1e9
    if busbw:
        row["busbw_gbs"] = busbw
    if error is not None:
        row["max_error"] = error
    if note:
        row["note"] = note
    rows.append(row)
    if rank == 0:
        extra = f"{row['tflops']:7.1f} TFLOP/s" if flops else ""
        extra += f"{busbw:8.1f} GB/s" if busbw else ""
        err = f"  err {error:.3g}" if error is not None else ""
        print(f"{case:10} {size:>14} {variant:28} {ms:9.3f} ms {extra}{err} {note}", flush=True)


def timeline(fd, inputs):
    """Where a sharded run's time goes, from one traced run: the steps' and regions' summed
    times and how long steps ran beside regions on other streams (ms)."""
    spans = fd._sharded_executor.trace(list(inputs), comm)
    comm_us = sum(e - s for k, _, _, s, e in spans if k == "communicate")
    compute_us = sum(e - s for k, _, _, s, e in spans if k == "launch")
    beside = 0.0
    for k1, _, s1, b1, e1 in spans:
        if k1 != "communicate":
            continue
        for k2, _, s2, b2, e2 in spans:
            if k2 == "launch" and s2 != s1:
                beside += max(0.0, min(e1, e2) - max(b1, b2))
    end = max(e for *_, e in spans)
    return (f"steps {comm_us / 1e3:.3f} ms, regions {compute_us / 1e3:.3f} ms, "
            f"overlapped {beside / 1e3:.3f} ms, span {end / 1e3:.3f} ms")


def breakdown(name, fd, inputs, torch_fn):
    """Rank 0 prints where the time goes: each traced region and step of Braze's run (segment,
    stream, milliseconds) and the GPU kernels of PyTorch's, by total time."""
    spans = fd._sharded_executor.trace(list(inputs), comm)
    from torch.profiler import ProfilerActivity, profile

    def profiled(fn):
        fn()
        torch.cuda.synchronize()
        dist.barrier()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return prof

    prof = profiled(torch_fn)
    # CUPTI sees every kernel of the process: Braze's too.
    braze_prof = profiled(lambda: fd.execute(list(inputs)))
    if rank != 0:
        return
    print(f"--- {name}: Braze's kernels")
    print(braze_prof.key_averages().table(sort_by="cuda_time_total", row_limit=20,
                                          max_name_column_width=90))
    print(f"--- {name}: Braze's regions and steps (segment, stream, ms)")
    for kind, segment, stream, start, end in spans:
        print(f"  {kind:12} segment {segment:3} stream {stream:2} {(end - start) / 1e3:8.3f} ms")
    print(f"--- {name}: PyTorch's kernels")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
    print(f"--- {name}: Braze's program\n{fd._sharded_executor.program()}")
    print(f"--- {name}: Braze's steps and regions' kernels\n{fd._sharded_executor.describe()}")


def max_error(a, b):
    return (a.float() - b.float()).abs().max().item()


# ---- collectives

def collectives():
    sizes = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
    if args.quick:
        sizes = sizes[:3]
    for nbytes in sizes:
        n = nbytes // 2
        x = torch.randn(n, device=device, dtype=torch.bfloat16)
        part = torch.randn(n // world, device=device, dtype=torch.bfloat16)
        out = torch.empty(n, device=device, dtype=torch.bfloat16)
        label = f"{nbytes >> 20} MiB"
        factor = 2 * (world - 1) / world
        iters = 20 if nbytes <= (1 << 26) else 8
        for name, fn in (
            ("braze", lambda: braze.multidevice.all_reduce(x, comm)),
            ("torch.distributed", lambda: dist.all_reduce(x)),
        ):
            ms = timed(fn, iters=iters)
            report("allreduce", label, name, ms, busbw=nbytes / ms / 1e6 * factor)
        for name, transport, fn in (
            ("braze", "nccl", lambda: braze.multidevice.all_gather(out, part, comm)),
            ("braze, copy engines", "copy_engines",
             lambda: braze.multidevice.all_gather(out, part, comm)),
            ("torch.distributed", "nccl", lambda: dist.all_gather_into_tensor(out, part)),
        ):
            comm.allgather_transport = transport
            ms = timed(fn, iters=iters)
            report("allgather", label, name, ms, busbw=nbytes / ms / 1e6 * (world - 1) / world)
        comm.allgather_transport = "auto"
    # Both transports gather what torch's allgather does.
    part = torch.randn(3 * 4096 + 1, device=device, dtype=torch.bfloat16)
    expected = torch.empty(part.numel() * world, device=device, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(expected, part)
    for transport in ("nccl", "copy_engines"):
        comm.allgather_transport = transport
        out = torch.full_like(expected, float("nan"))
        braze.multidevice.all_gather(out, part, comm)
        torch.cuda.synchronize()
        assert torch.equal(out, expected), f"Braze's allgather by {transport} differs from torch's"
    comm.allgather_transport = "auto"
    if comm.copy_engines_refusal and rank == 0:
        print(f"(copy engines refused: {comm.copy_engines_refusal})")
    # Results agree with torch's.
    x = torch.randn(4096, device=device, dtype=torch.float32)
    y = x.clone()
    braze.multidevice.all_reduce(x, comm)
    dist.all_reduce(y)
    torch.cuda.synchronize()
    assert torch.equal(x, y), "Braze's allreduce differs from torch's"


# ---- allgather + GEMM

def timed_matmul(a, b):
    """Braze's matmul of this rank's whole operands on its GPU alone: the compute floor of the
    sharded cases, without communication."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1] * a.dim(), contiguity=[True] * a.dim(),
                             dtype=DataType.BFloat16)
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True] * 2, dtype=DataType.BFloat16)
        fd.add_output(fd.ops.matmul(x, w))
    return timed(lambda: fd.execute([a, b]))


def ag_gemm(m):
    k, n = HIDDEN, INTER
    flops = 2.0 * m * k * (n // world)
    w = torch.randn(k, n // world, device=device, dtype=torch.bfloat16) * k**-0.5
    x_rows = torch.randn(m // world, k, device=device, dtype=torch.bfloat16)  # this rank's rows
    gathered = torch.empty(m, k, device=device, dtype=torch.bfloat16)

    def torch_ag_gemm():
        dist.all_gather_into_tensor(gathered, x_rows)
        return gathered @ w

    reference = torch_ag_gemm()
    report("ag_gemm", f"M={m}", "pytorch (AG, then matmul)", timed(torch_ag_gemm), flops)
    report("ag_gemm", f"M={m}", "pytorch matmul alone", timed(lambda: gathered @ w), flops)
    try:
        # PyTorch's fused all-gather + matmul (symmetric memory; pipelined over the ranks).
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        group = dist.group.WORLD.group_name
        enable_symm_mem_for_group(group)
        fused = torch.ops.symm_mem.fused_all_gather_matmul

        def torch_fused():
            return fused(x_rows, [w], gather_dim=0, group_name=group)[1][0]

        error = max_error(torch_fused(), reference)
        report("ag_gemm", f"M={m}", "pytorch fused_all_gather_matmul", timed(torch_fused), flops,
               error=error)
    except Exception as e:  # noqa: BLE001
        report("ag_gemm", f"M={m}", "pytorch fused_all_gather_matmul", float("nan"),
               note=f"failed: {str(e).splitlines()[0][:120]}")
    report("ag_gemm", f"M={m}", "braze matmul alone (1 GPU)", timed_matmul(gathered, w), flops)
    report("ag_gemm", f"M={m}", "braze matmul alone, [1, M, K] (1 GPU)",
           timed_matmul(gathered.view(1, m, k), w), flops)
    for transport in ("nccl", "copy_engines"):
        comm.allgather_transport = transport
        by = "" if transport == "nccl" else ", copy engines"
        for chunks in [1] + CHUNKS:
            # [chunks, m / chunks, k], each chunk's rows split over the ranks: this rank's part
            # of chunk i is rows i * m / (chunks * world) ... of its own rows.
            x_part = x_rows.view(chunks, m // chunks // world, k)
            fd = tp.ag_gemm(mesh, chunks)
            variant = ("braze, no overlap" if chunks == 1
                       else f"braze, {chunks} stream chunks") + by
            try:
                (out,) = fd.execute([x_part, w])
                # Chunk i gathers every rank's part i: the rows of reference in that order.
                expected = reference.view(world, chunks, m // chunks // world, -1).transpose(0, 1)
                error = max_error(out.view_as(expected), expected)
                ms = timed(lambda: fd.execute([x_part, w]))
                report("ag_gemm", f"M={m}", variant, ms, flops, error=error,
                       note=f"host {host_time(lambda: fd.execute([x_part, w])):.3f} ms, "
                       + timeline(fd, [x_part, w]))
            except Exception as e:  # noqa: BLE001 - a row says what failed; others go on
                report("ag_gemm", f"M={m}", variant, float("nan"),
                       note=f"failed: {str(e).splitlines()[0][:120]}")
    comm.allgather_transport = "auto"
    if comm.copy_engines_refusal and rank == 0:
        print(f"(copy engines refused: {comm.copy_engines_refusal})")


# ---- GEMM + reduce-scatter

def gemm_rs(m):
    k, n = INTER, HIDDEN
    flops = 2.0 * m * (k // world) * n
    a = torch.randn(m, k // world, device=device, dtype=torch.bfloat16)
    b = torch.randn(k // world, n, device=device, dtype=torch.bfloat16) * k**-0.5
    scattered = torch.empty(m // world, n, device=device, dtype=torch.bfloat16)

    def torch_gemm_rs():
        dist.reduce_scatter_tensor(scattered, a @ b)
        return scattered

    report("gemm_rs", f"M={m}", "pytorch (matmul, then RS)", timed(torch_gemm_rs), flops)
    try:
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        group = dist.group.WORLD.group_name
        enable_symm_mem_for_group(group)
        fused = torch.ops.symm_mem.fused_matmul_reduce_scatter

        def torch_fused():
            return fused(a, b, "sum", scatter_dim=0, group_name=group)

        report("gemm_rs", f"M={m}", "pytorch fused_matmul_reduce_scatter", timed(torch_fused),
               flops)
    except Exception as e:  # noqa: BLE001
        report("gemm_rs", f"M={m}", "pytorch fused_matmul_reduce_scatter", float("nan"),
               note=f"failed: {str(e).splitlines()[0][:120]}")
    report("gemm_rs", f"M={m}", "braze matmul alone (1 GPU)", timed_matmul(a, b), flops)
    partial = (a @ b).float()
    dist.all_reduce(partial)
    for chunks in [1] + CHUNKS:
        a_part = a.view(chunks, m // chunks, k // world)
        fd = tp.gemm_rs(mesh, chunks)
        try:
            (out,) = fd.execute([a_part, b])
            rows = m // chunks // world
            expected = partial.view(chunks, world, rows, n)[:, rank]
            error = max_error(out.view_as(expected), expected)
            ms = timed(lambda: fd.execute([a_part, b]))
            variant = "braze, no overlap" if chunks == 1 else f"braze, {chunks} stream chunks"
            report("gemm_rs", f"M={m}", variant, ms, flops, error=error,
                   note=f"host {host_time(lambda: fd.execute([a_part, b])):.3f} ms, "
                   + timeline(fd, [a_part, b]))
        except Exception as e:  # noqa: BLE001
            report("gemm_rs", f"M={m}", f"braze, {chunks} chunks", float("nan"),
                   note=f"failed: {str(e).splitlines()[0][:120]}")


# ---- tensor-parallel MLP block forward

def mlp(m):
    hdim, inter = HIDDEN, INTER
    flops = 2.0 * 2 * m * hdim * (inter // world)
    torch.manual_seed(1)  # the same x and g on every rank
    x = torch.randn(m, hdim, device=device, dtype=torch.bfloat16)
    g = torch.rand(hdim, device=device, dtype=torch.bfloat16) + 0.5
    torch.manual_seed(2 + rank)
    w1 = torch.randn(hdim, inter // world, device=device, dtype=torch.bfloat16) * hdim**-0.5
    w2 = torch.randn(inter // world, hdim, device=device, dtype=torch.bfloat16) * inter**-0.5

    def torch_mlp():
        normed = torch.nn.functional.rms_norm(x, (hdim,), g, 1e-6)
        y = torch.nn.functional.silu(normed @ w1) @ w2
        dist.all_reduce(y)
        return y

    expected = torch_mlp()
    report("mlp_fwd", f"M={m}", "pytorch TP (eager)", timed(torch_mlp), flops)
    fd = tp.mlp_forward(mesh)
    try:
        (out,) = fd.execute([x, g, w1, w2])
        error = max_error(out, expected)
        run = lambda: fd.execute([x, g, w1, w2])  # noqa: E731
        report("mlp_fwd", f"M={m}", "braze", timed(run), flops, error=error,
               note=f"host {host_time(run):.3f} ms, " + timeline(fd, [x, g, w1, w2]))
    except Exception as e:  # noqa: BLE001
        report("mlp_fwd", f"M={m}", "braze", float("nan"),
               note=f"failed: {str(e).splitlines()[0][:120]}")


def mlp_backward(m):
    hdim, inter = HIDDEN, INTER
    flops = 2.0 * 6 * m * hdim * (inter // world)  # recomputed forward (2) + 4 gradients
    torch.manual_seed(1)
    x = torch.randn(m, hdim, device=device, dtype=torch.bfloat16)
    g = torch.rand(hdim, device=device, dtype=torch.bfloat16) + 0.5
    dy = torch.randn(m, hdim, device=device, dtype=torch.bfloat16)
    torch.manual_seed(2 + rank)
    w1 = torch.randn(hdim, inter // world, device=device, dtype=torch.bfloat16) * hdim**-0.5
    w2 = torch.randn(inter // world, hdim, device=device, dtype=torch.bfloat16) * inter**-0.5
    leaves = [t.detach().clone().requires_grad_(True) for t in (x, g, w1, w2)]

    def torch_backward():
        # Tensor-parallel backward in eager PyTorch: autograd through the local block, the
        # input gradient's partial sums over the split intermediate dim allreduced.
        xs, gs, w1s, w2s = leaves
        for t in leaves:
            t.grad = None
        normed = torch.nn.functional.rms_norm(xs, (hdim,), gs, 1e-6)
        n_detached = normed.detach().requires_grad_(True)
        y = torch.nn.functional.silu(n_detached @ w1s) @ w2s
        y.backward(dy)
        dist.all_reduce(n_detached.grad)
        normed.backward(n_detached.grad)
        return xs.grad, gs.grad, w1s.grad, w2s.grad

    expected = torch_backward()
    report("mlp_bwd", f"M={m}", "pytorch TP (eager autograd)", timed(torch_backward), flops)
    fd = tp.mlp_backward(mesh)
    try:
        outs = fd.execute([x, g, w1, w2, dy])
        error = max(max_error(o, e) / max(e.abs().max().item(), 1e-6)
                    for o, e in zip(outs, expected))
        run = lambda: fd.execute([x, g, w1, w2, dy])  # noqa: E731
        if args.breakdown:
            breakdown(f"mlp_bwd M={m}", fd, [x, g, w1, w2, dy], torch_backward)
        report("mlp_bwd", f"M={m}", "braze", timed(run), flops, error=error,
               note=f"host {host_time(run):.3f} ms, " + timeline(fd, [x, g, w1, w2, dy])
               + " (err: max |diff| / max |torch| over dx, dg, dw1, dw2)")
    except Exception as e:  # noqa: BLE001
        report("mlp_bwd", f"M={m}", "braze", float("nan"),
               note=f"failed: {str(e).splitlines()[0][:120]}")


# ---- nvFuser's multi-device executor on the same allgather + GEMM and GEMM + reduce-scatter

def nvfuser_cases():
    try:
        # nvFuser's communicator serves its own store at MASTER_PORT, which torchrun's holds.
        os.environ["MASTER_PORT"] = str(int(os.environ["MASTER_PORT"]) + 17)
        import nvfuser_direct as nvf
    except Exception as e:  # noqa: BLE001
        if rank == 0:
            print(f"(nvFuser not available: {e})")
        return
    nmesh = nvf.multidevice.DeviceMesh(range(world))
    for m in TOKENS:
        k, n = HIDDEN, INTER
        for chunks in [1] + CHUNKS:
            try:
                with nvf.FusionDefinition() as fd:
                    x = fd.define_tensor(shape=[chunks, world, m // (chunks * world), k],
                                         contiguity=True, dtype=nvf.DataType.BFloat16)
                    w = fd.define_tensor(shape=[n // world * world, k], contiguity=True,
                                         dtype=nvf.DataType.BFloat16)
                    y = fd.ops.linear(x, w)
                    fd.add_output(y)
                    for tv in (x, w, y):
                        tv.set_device_mesh(nmesh)
                    x.axis(1).parallelize(nvf.ParallelType.mesh_x)
                    w.outer_split(0, world)
                    w.axis(0).parallelize(nvf.ParallelType.mesh_x)
                    y.outer_split(3, world)
                    y.axis(3).parallelize(nvf.ParallelType.mesh_x)
                    if chunks > 1:
                        y.axis(0).parallelize(nvf.ParallelType.stream)
                params = nvf.multidevice.MultiDeviceExecutorParams()
                params.use_allocation_cache = True
                executor = nvf.multidevice.MultiDeviceExecutor(fd.fusion, params)
                x_part = torch.randn(chunks, 1, m // (chunks * world), k, device=device,
                                     dtype=torch.bfloat16)
                w_part = torch.randn(n // world, k, device=device, dtype=torch.bfloat16)
                ms = timed(lambda: executor.run([x_part, w_part]))
                variant = "nvfuser, no overlap" if chunks == 1 else f"nvfuser, {chunks} chunks"
                report("ag_gemm", f"M={m}", variant, ms, 2.0 * m * k * (n // world))
            except Exception as e:  # noqa: BLE001
                report("ag_gemm", f"M={m}", f"nvfuser, {chunks} chunks", float("nan"),
                       note=f"failed: {str(e).splitlines()[0][:120]}")


if rank == 0:
    print(f"multidevice benchmark: {world} x {torch.cuda.get_device_name(device)}, "
          f"hidden {HIDDEN}, intermediate {INTER}, bf16; times: slowest rank's median")
if "collectives" not in SKIP:
    collectives()
for m in TOKENS:
    if "ag_gemm" not in SKIP:
        ag_gemm(m)
    if "gemm_rs" not in SKIP:
        gemm_rs(m)
    if "mlp" not in SKIP:
        mlp(m)
    if "mlp_bwd" not in SKIP:
        mlp_backward(m)
if "nvfuser" not in SKIP:
    nvfuser_cases()
if rank == 0 and args.json:
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)
dist.barrier()
dist.destroy_process_group()
