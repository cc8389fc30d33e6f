#!/usr/bin/env python3
"""The warm Triton helper's compile latency as it was before the sandbox (the helper of an earlier commit,
speaking that commit's protocol: REQUEST<TAB>OUT<TAB>ERR, the client killing the named pid), for the
before/after figure of docs/measurements.md. bench_triton_sandbox gives the after.

    warm_latency_before.py OLD_HELPER_DIR REQUESTS.jsonl N
REQUESTS.jsonl: one compile request a line, as bench_triton_sandbox writes them; used in turn, in the same
order as bench_triton_sandbox's warm row (each configuration new to Triton's cache, its folder fresh).
OLD_HELPER_DIR holds triton_aot.py and warm_tool.py of that commit (git show COMMIT:python/kernelloop/...).
Prints the server's start (to "ready") and the median per compile, client-side wall time, as the C++ client
measures it: a fresh folder per request, the request written, the reply read back.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def main(argv):
    helper_dir, request_path, n = argv[1], argv[2], int(argv[3])
    requests = [line for line in open(request_path) if line.strip()]
    start = time.perf_counter()
    # Triton's own cache in a folder of this run: each configuration is compiled, as after the sandbox.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kl-before-cache-")
    server = subprocess.Popen([sys.executable, os.path.join(helper_dir, "triton_aot.py"), "--serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              bufsize=1)
    assert server.stdout.readline().strip() == "ready"
    ready_ms = (time.perf_counter() - start) * 1e3
    times, ok = [], True
    for index in range(n + 1):
        request = requests[index % len(requests)]
        t = time.perf_counter()
        folder = tempfile.mkdtemp(prefix="kl-tool-")
        os.mkdir(os.path.join(folder, "out"))
        with open(os.path.join(folder, "request.json"), "w") as out:
            out.write(request)
        server.stdin.write("%s\t%s\t%s\n" % (os.path.join(folder, "request.json"), os.path.join(folder, "out"),
                                             os.path.join(folder, "stderr.txt")))
        server.stdin.flush()
        assert server.stdout.readline().startswith("started ")
        assert server.stdout.readline().startswith("ended ")
        with open(os.path.join(folder, "out", "reply.json")) as reply:
            ok = ok and json.load(reply).get("ok", False)
        shutil.rmtree(folder)
        times.append((time.perf_counter() - t) * 1e3)
    server.stdin.close()
    server.wait()
    warm = sorted(times[1:])  # the first compile warms Triton's own caches, as bench_triton_sandbox's does
    print(json.dumps({"ready_ms": round(ready_ms), "warm_median_ms": round(warm[len(warm) // 2], 1), "n": n,
                      "all_ok": ok}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
