#!/usr/bin/env python3
"""linear(x.to(bf16), w[.to(bf16)]) with fp32 x, w or both: nvFuser's fd.execute of the whole
definition against PyTorch eager (cast, then cuBLAS), TFLOP/s from the median of 7 samples of
10 back-to-back calls between CUDA events. Run after `source nvfuser-env.sh`, plain and with
NVFUSER_ENABLE=fuse_matmul."""
import json
import os
import statistics

import torch
from nvfuser_direct import DataType, FusionDefinition


def median_us(fn, launches=10, samples=7):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(samples):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(launches):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / launches)
    return statistics.median(ts)


cases = [(True, False, (8192, 256, 8192)), (True, False, (16384, 128, 4096)),
         (False, True, (128, 11008, 4096)), (False, True, (64, 28672, 8192)),
         (True, True, (128, 256, 8192))]
label = os.environ.get("NVFUSER_ENABLE", "default")
for cx, cw, (m, n, k) in cases:
    x = torch.rand(m, k, device="cuda", dtype=torch.float32 if cx else torch.bfloat16) * 2 - 1
    w = torch.rand(n, k, device="cuda", dtype=torch.float32 if cw else torch.bfloat16) * 2 - 1
    flop = 2 * m * n * k
    row = {"shape": [m, n, k], "x_fp32": cx, "w_fp32": cw, "nvfuser_enable": label}
    eager = lambda: torch.nn.functional.linear(x.to(torch.bfloat16), w.to(torch.bfloat16))
    row["eager_TFLOPs"] = flop / median_us(eager) / 1e6
    try:
        with FusionDefinition() as fd:
            tx = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                                  dtype=DataType.Float if cx else DataType.BFloat16)
            tw = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                                  dtype=DataType.Float if cw else DataType.BFloat16)
            if cx:
                tx = fd.ops.cast(tx, DataType.BFloat16)
            if cw:
                tw = fd.ops.cast(tw, DataType.BFloat16)
            fd.add_output(fd.ops.linear(tx, tw))
        out = fd.execute([x, w])[0]
        row["nvf_max_err"] = (out.float() - eager().float()).abs().max().item()
        row["nvf_TFLOPs"] = flop / median_us(lambda: fd.execute([x, w])) / 1e6
    except Exception as e:
        row["nvf_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    print(json.dumps(row), flush=True)
