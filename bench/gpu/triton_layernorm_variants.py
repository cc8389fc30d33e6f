"""Where the time of a Triton LayerNorm+GELU goes on this GPU: structural variants side by side.

An exploration bench for issue 13 (how close to the same-size copy a Triton LayerNorm+GELU gets), run on
the GPU machine: `python3 bench/gpu/triton_layernorm_variants.py [M N]` (default 8192 4096, fp16).
Each variant is checked against PyTorch (atol/rtol 1e-2) before it is timed; times are
triton.testing.do_bench medians (cold L2: do_bench zeroes a 256 MB buffer before every call), beside the
same-size device copy timed the same way. These are exploration figures only; the loop's own figures
come from the runner (CUDA events, its own flush, same job).
"""
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def gelu(h):
    u = h * (0.7978845608028654 + 0.035677408136300125 * h * h)
    t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [u], dtype=tl.float32, is_pure=True, pack=1)
    return 0.5 * h * (1.0 + t)


@triton.jit
def one_row(x_ptr, g_ptr, b_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr, EARLY: tl.constexpr,
            HINTS: tl.constexpr):
    """The scripted reply's shape: one program per row, the row held in registers."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    if EARLY:
        g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    if HINTS:
        v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    else:
        v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / N
    d = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    if not EARLY:
        g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    out = gelu(d * rstd * g + b).to(tl.float16)
    if HINTS:
        tl.store(y_ptr + row * stride_y + cols, out, mask=mask, cache_modifier=".cs")
    else:
        tl.store(y_ptr + row * stride_y + cols, out, mask=mask)


@triton.jit
def many_rows(x_ptr, g_ptr, b_ptr, y_ptr, M, N, stride_x, stride_y, eps, ROWS: tl.constexpr,
              BLOCK_N: tl.constexpr, HINTS: tl.constexpr):
    """ROWS rows per program as one [ROWS, BLOCK_N] tile: more independent loads in flight per program."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    mask = (rows < M)[:, None] & cmask[None, :]
    g = tl.load(g_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    r64 = rows.to(tl.int64)[:, None]
    if HINTS:
        v = tl.load(x_ptr + r64 * stride_x + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
    else:
        v = tl.load(x_ptr + r64 * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=1) / N
    d = tl.where(mask, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
    out = gelu(d * rstd[:, None] * g[None, :] + b[None, :]).to(tl.float16)
    if HINTS:
        tl.store(y_ptr + r64 * stride_y + cols[None, :], out, mask=mask, cache_modifier=".cs")
    else:
        tl.store(y_ptr + r64 * stride_y + cols[None, :], out, mask=mask)


@triton.jit
def persistent(x_ptr, g_ptr, b_ptr, y_ptr, M, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr,
               STAGES: tl.constexpr):
    """A grid of a few programs per SM, each looping over rows; tl.range may pipeline the next row's load."""
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=STAGES):
        r = row.to(tl.int64)
        v = tl.load(x_ptr + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(v, axis=0) / N
        d = tl.where(mask, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
        tl.store(y_ptr + r * stride_y + cols, gelu(d * rstd * g + b).to(tl.float16), mask=mask)


@triton.jit
def _add2(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@triton.jit
def one_row_moments(x_ptr, g_ptr, b_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    """One program per row, sum and sum of squares in one two-operand reduction (one barrier round, not two)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    s, ss = tl.reduce((v, v * v), 0, _add2)
    mean = s / N
    rstd = 1.0 / tl.sqrt(tl.maximum(ss / N - mean * mean, 0.0) + eps)
    g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_y + cols, gelu((v - mean) * rstd * g + b).to(tl.float16), mask=mask)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """The same bytes moved by a plain Triton kernel: what a kernel (not the copy engine path) reaches."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


def reference(x, g, b, eps):
    return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x.float(), (x.shape[1],), g.float(), b.float(), eps),
                                    approximate="tanh").half()


def main():
    M, N = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (8192, 4096)
    torch.manual_seed(0)
    x = (torch.randn(M, N, device="cuda") * 2 + 0.5).half()
    g = (torch.rand(N, device="cuda") + 0.5).half()
    b = (torch.rand(N, device="cuda") - 0.5).half()
    y = torch.empty_like(x)
    eps = 1e-5
    expect = reference(x, g, b, eps)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    nbytes = 2 * M * N * 2

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3  # us

    copy_us = bench(lambda: y.copy_(x))
    print(f"{torch.cuda.get_device_name()}  M={M} N={N} fp16  {nbytes / 1e6:.1f} MB moved")
    print(f"copy (torch y.copy_(x))                      {copy_us:8.2f} us  {nbytes / copy_us / 1e3:7.0f} GB/s  100.0%")
    bn = triton.next_power_of_2(N)
    def run(label, launch):
        t0 = time.time()
        try:
            y.zero_()
            k = launch()
            regs = getattr(k, "n_regs", None)
            spills = getattr(k, "n_spills", None)
            torch.cuda.synchronize()
            if not torch.allclose(y.float(), expect.float(), atol=1e-2, rtol=1e-2):
                err = (y.float() - expect.float()).abs().max().item()
                print(f"{label:45s} WRONG (max abs err {err:.3g})")
                return
            us = bench(launch)
            print(f"{label:45s}{us:8.2f} us  {nbytes / us / 1e3:7.0f} GB/s  {100 * copy_us / us:5.1f}%"
                  f"  regs={regs} spills={spills}  (compile+check {time.time() - t0:.1f} s)", flush=True)
        except Exception as e:  # a variant the compiler refuses is a line of the table, not the end of it
            print(f"{label:45s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")

    for blk, w in ((1024, 4), (2048, 4), (4096, 4), (4096, 8), (8192, 8)):
        def tcopy(blk=blk, w=w):
            return copy_kernel[(triton.cdiv(M * N, blk),)](x, y, M * N, BLOCK=blk, num_warps=w)
        tcopy()
        us = bench(tcopy)
        print(f"{'triton copy BLOCK=%d W=%d' % (blk, w):45s}{us:8.2f} us  {nbytes / us / 1e3:7.0f} GB/s  {100 * copy_us / us:5.1f}%")
    for w in (2, 4, 8):
        run(f"one_row_moments W={w}", lambda w=w: one_row_moments[(M,)](
            x, g, b, y, N, x.stride(0), y.stride(0), eps, BLOCK_N=bn, num_warps=w))

    for w in (2, 4, 8, 16):
        for early, hints in ((0, 0), (1, 0), (1, 1)):
            run(f"one_row W={w} early={early} hints={hints}",
                lambda w=w, early=early, hints=hints: one_row[(M,)](
                    x, g, b, y, N, x.stride(0), y.stride(0), eps, BLOCK_N=bn, EARLY=early, HINTS=hints, num_warps=w))
    for rows in (2, 4):
        for w in (4, 8, 16):
            for hints in (0, 1):
                run(f"many_rows ROWS={rows} W={w} hints={hints}",
                    lambda rows=rows, w=w, hints=hints: many_rows[(triton.cdiv(M, rows),)](
                        x, g, b, y, M, N, x.stride(0), y.stride(0), eps, ROWS=rows, BLOCK_N=bn, HINTS=hints,
                        num_warps=w))
    for per_sm in (2, 4, 8):
        for w in (4, 8):
            for st in (1, 2, 3):
                run(f"persistent {per_sm}/SM W={w} stages={st}",
                    lambda per_sm=per_sm, w=w, st=st: persistent[(min(M, per_sm * sms),)](
                        x, g, b, y, M, N, x.stride(0), y.stride(0), eps, BLOCK_N=bn, STAGES=st, num_warps=w))


if __name__ == "__main__":
    main()
