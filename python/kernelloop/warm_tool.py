"""A warm copy of one of KernelLoop's helpers: imports once, forks one child per request.

    python3 HELPER.py --serve        (HELPER calls warm_tool.serve(its main, the modules to preload))

Why: a Triton candidate written by torch.compile imports torch._inductor's runtime, and a fresh Python
spends 9-10 s on that import before the compile starts (measured on the H200, issue 27), which made
compile the whole cost of a job. The server pays the import once; each request runs in a forked child,
so a candidate still gets a fresh interpreter state (its module, Triton's in-process caches, a crash or
a hang end with the child) exactly as a cold `python3 HELPER.py REQUEST OUT_DIR` gives it.

Protocol (core/compile/warm_python_tool.cpp), one line each, on the server's stdin and stdout:
    server -> "ready"                              after the preload
    client -> "REQUEST_PATH<TAB>OUT_DIR<TAB>ERR_PATH"
    server -> "started PID"                        the child's pid (its own process group: the client
                                                   kills -PID at its time limit)
    server -> "ended STATUS"                       the child's exit status, 128 + signal when killed
The child writes its stdout and stderr to ERR_PATH and its reply into OUT_DIR, as a cold run does.
End of input ends the server.
"""
import importlib
import os
import sys


def preload(modules):
    """Imports what requests will import. A module that cannot be imported is skipped: the request
    that needs it fails in its child with the helper's own message, as it would cold."""
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - optional (torch absent, an older Triton)
            pass


def run_child(main, script, request, out_dir, err_path, channel_fds):
    os.setpgid(0, 0)
    for fd in channel_fds:
        os.close(fd)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(err, 1)
    os.dup2(err, 2)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    status = 70
    try:
        status = main([script, request, out_dir]) or 0
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - the helper's own bug: its traceback is the stderr
        import traceback
        traceback.print_exc()
        status = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def serve(main, modules, script=None):
    script = script or sys.argv[0]
    # The protocol gets its own descriptors; fd 1 becomes stderr so that a stray print (ours or an
    # import's) can never be read as a protocol line.
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    channel_fds = (requests.fileno(), replies.fileno())
    preload(modules)
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        sys.stderr.write("warm_tool: a preloaded module initialised CUDA; forked children cannot use it\n")
    replies.write("ready\n")
    for line in requests:
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 3:
            replies.write("error malformed request line\n")
            continue
        request, out_dir, err_path = parts
        pid = os.fork()
        if pid == 0:
            run_child(main, script, request, out_dir, err_path, channel_fds)
        replies.write("started %d\n" % pid)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            code = 128 + os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        replies.write("ended %d\n" % code)
    return 0
