"""A warm copy of one of KernelLoop's helpers: imports once, forks one child per request.

    python3 HELPER.py --serve        (HELPER calls warm_tool.serve(its main, the modules to preload))

Why: a Triton candidate written by torch.compile imports torch._inductor's runtime, and a fresh Python
spends 9-10 s on that import before the compile starts (measured on the H200, issue 27), which made
compile the whole cost of a job. The server pays the import once; each request runs in a forked child,
so a candidate still gets a fresh interpreter state (its module, Triton's in-process caches, a crash or
a hang end with the child) exactly as a cold `python3 HELPER.py REQUEST OUT_DIR` gives it.

Protocol (core/compile/warm_python_tool.cpp), one line each, on the server's stdin and stdout:
    server -> "ready"                              after the preload
    client -> "REQUEST_PATH<TAB>OUT_DIR<TAB>ERR_PATH<TAB>LIMIT_MS"
    server -> "started PID"                        the child's pid, for the log only (inside a sandbox
                                                   it is a pid of the sandbox's own namespace)
    server -> "ended STATUS[ timeout][ strays=N]"  the child's exit status, 128 + signal when killed;
                                                   "timeout" when the server killed it at LIMIT_MS;
                                                   N processes it left behind, killed
The child writes its stdout and stderr to ERR_PATH and its reply into OUT_DIR, as a cold run does.
The server enforces the limit itself: the client never signals a process the server names, so a reply
line forged by a child could not aim a kill anywhere. End of input ends the server, also while a child
runs (the child is killed first): a client killed with -9 leaves nothing running.

The server is a subreaper and cannot be traced or have its descriptors opened by its children
(confine.py); after each request it kills whatever the child left and, inside the sandbox, empties the
folders the child could write (KL_SANDBOX_WIPE), so that no request sees what an earlier one left.
"""
import importlib
import os
import select
import shutil
import signal
import sys
import time

import confine


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
    confine.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: a child never outlives its server
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
    confine.make_undumpable()
    confine.become_subreaper()
    wipe = [folder for folder in os.environ.get("KL_SANDBOX_WIPE", "").split(os.pathsep) if folder]
    wipe_folders(wipe)  # what the preload left: the server must not depend on it, as no request may
    replies.write("ready\n")
    for line in iter(requests.readline, ""):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4 or not parts[3].isdigit():
            replies.write("error malformed request line\n")
            continue
        request, out_dir, err_path, limit_ms = parts
        pid = os.fork()
        if pid == 0:
            run_child(main, script, request, out_dir, err_path, channel_fds)
        replies.write("started %d\n" % pid)
        status, timed_out, closed = wait_child(pid, int(limit_ms) / 1e3, requests)
        strays = confine.end_strays()
        wipe_folders(wipe)
        if closed:
            return 0
        code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        replies.write("ended %d%s%s\n" % (code, " timeout" if timed_out else "",
                                          " strays=%d" % strays if strays else ""))
    return 0


def wait_child(pid, limit_s, requests):
    """(status, timed out, input closed): waits for the request's child until its limit, watching the
    input, whose end means the client is gone. A child past its limit is killed with its group."""
    deadline = time.monotonic() + limit_s
    timed_out = closed = False
    try:
        watch = os.pidfd_open(pid)
    except (AttributeError, OSError):
        watch = None
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            break
        left = deadline - time.monotonic()
        if left <= 0 or closed:
            timed_out = not closed
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except OSError:
                    pass
            _, status = os.waitpid(pid, 0)
            break
        fds = [requests] + ([watch] if watch is not None else [])
        ready, _, _ = select.select(fds, [], [], min(left, 0.05 if watch is None else left))
        if requests in ready and not requests.buffer.peek(1):  # the client sends nothing while a child runs
            closed = True
    if watch is not None:
        os.close(watch)
    return status, timed_out, closed


def mount_points():
    points = []
    try:
        with open("/proc/self/mountinfo") as info:
            for line in info:
                fields = line.split()
                if len(fields) > 4:
                    points.append(fields[4].replace("\\040", " "))
    except OSError:
        pass
    return points


def wipe_folders(folders):
    """Empties `folders`, but never a mount point or a folder holding one: the client's spool is bound
    inside /tmp, and its files are the client's to read and remove."""
    if not folders:
        return
    mounts = mount_points()
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(folder, name)
            if any(point == path or point.startswith(path + "/") for point in mounts):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.remove(path)
                except OSError:
                    pass
