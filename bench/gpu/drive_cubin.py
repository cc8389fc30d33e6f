#!/usr/bin/env python3
"""Runs a cubin written by kl_runner_bench outside KernelLoop, for cross-checking the runner's timing.

  drive_cubin.py LAUNCH.json dobench   -> triton.testing.do_bench median (ms -> us), as JSON on stdout
  drive_cubin.py LAUNCH.json ncu       -> 7 plain launches, for `ncu --clock-control none` to measure

The kernel is loaded with CuPy (cupy.RawModule(path=...)), its arguments built from the launch's
buffers (fresh normal/uniform inputs) and scalars, exactly as the runner passes them.
"""
import json
import sys

import cupy as cp
import numpy as np

SCALARS = {"i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64, "u8": np.uint8, "i8": np.int8}
DTYPES = {"f16": cp.float16, "bf16": None, "f32": cp.float32, "f64": cp.float64, "i32": cp.int32, "i64": cp.int64,
          "u8": cp.uint8, "i8": cp.int8}


def make_buffer(spec, rng):
    count = spec["rows"] * spec["row_stride"]
    dtype = DTYPES[spec["dtype"]]
    dist = spec.get("distribution")
    if dist is None:
        return cp.empty(count, dtype=dtype)
    if dist["kind"] == "normal":
        values = rng.standard_normal(count, dtype=cp.float32) * dist["b"] + dist["a"]
    elif dist["kind"] == "uniform":
        values = rng.uniform(dist["a"], dist["b"], count, dtype=cp.float32)
    else:
        values = cp.full(count, dist["a"], dtype=cp.float32)
    return values.astype(dtype)


def main():
    launch_file, mode = sys.argv[1], sys.argv[2]
    spec = json.load(open(launch_file))
    launch = spec["launch"]
    module = cp.RawModule(path=spec["cubin"])
    kernel = module.get_function(launch["kernel"])
    rng = cp.random.default_rng(7)
    buffers = {b["name"]: make_buffer(b, rng) for b in spec["buffers"]}
    args = []
    for arg in launch["args"]:
        if "buffer" in arg:
            args.append(buffers[arg["buffer"]])
        else:
            (kind, value), = arg.items()
            args.append(SCALARS[kind](value))
    grid, block, smem = tuple(launch["grid"]), tuple(launch["block"]), launch.get("smem", 0)

    def run():
        kernel(grid, block, tuple(args), shared_mem=smem)

    run()
    cp.cuda.Device().synchronize()
    if mode == "ncu":
        for _ in range(7):
            run()
        cp.cuda.Device().synchronize()
        return
    import torch  # noqa: F401  (do_bench times with torch's events and flushes L2 with a torch buffer)
    import triton.testing
    median_ms = triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median")
    mean_ms = triton.testing.do_bench(run, warmup=25, rep=200)
    print(json.dumps({"median_us": median_ms * 1000.0, "mean_us": mean_ms * 1000.0}))


if __name__ == "__main__":
    main()
