"""The in-process half of the sandbox for code a model wrote (docs/llm.md, "What runs where").

The wall is bubblewrap, set up by the C++ side (core/compile/confinement.cpp): no network, no home, a
read-only system, a private /tmp, its own process tree. This half runs inside the process that executes
a candidate's module and does what a mount table cannot:
- bounds: address space (RLIMIT_AS, above what the warm imports already mapped) and CPU seconds;
- names: an audit hook (PEP 578) that refuses, and remembers, what a kernel file has no business doing
  — writing outside its private folder, reading under a hidden root, opening a connection, starting or
  signalling a process — so that the reply says "sandbox-write: ..." instead of an ENOENT or EROFS from
  deep inside the wall. A candidate that catches the refusal is still reported: the record is kept here;
- strays: the process becomes a subreaper, so that whatever it started is its child when it ends, and
  is killed and counted before the reply is written.
Audit hooks are not a security boundary (ctypes can go round them); bubblewrap is. Where the engineer
opted out of bubblewrap, this half is all there is, which is why that needs an explicit opt-in.
"""
import ctypes
import os
import resource
import signal
import sys
import time

# The kinds the C++ side maps to its categories (core/compile/triton_compiler.cpp).
WRITE, READ, NETWORK, PROCESS = "write", "read", "network", "process"

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4

_state = {"installed": False, "phase": "trusted", "writable": (), "readable": (), "hidden": (),
          "violations": []}


class SandboxViolation(PermissionError):
    """What the audit hook raises; `kind` is one of WRITE, READ, NETWORK, PROCESS."""

    def __init__(self, kind, detail):
        super().__init__("sandbox-%s: %s" % (kind, detail))
        self.kind = kind
        self.detail = detail


def prctl(option, value):
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux, or no prctl: the wall still holds
        return -1


def make_undumpable():
    """No process of the same user may ptrace this one or open its /proc/PID/fd and /proc/PID/mem
    (a request's child could otherwise write forged lines into the warm server's reply pipe)."""
    prctl(PR_SET_DUMPABLE, 0)


def become_subreaper():
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def _real(path):
    try:
        return os.path.realpath(os.fsdecode(path))
    except Exception:  # noqa: BLE001 - a descriptor number or a strange object: judged as unknown
        return None


def _under(path, roots):
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _violate(kind, detail):
    if not _state["violations"]:
        _state["violations"].append((kind, detail))
    raise SandboxViolation(kind, detail)


def _check_path(path, writing):
    real = _real(path)
    if real is None:
        return
    if writing:
        if not _under(real, _state["writable"]):
            _violate(WRITE, "the candidate tried to write %s, outside its private folder" % real)
    elif _under(real, _state["hidden"]) and not _under(real, _state["readable"]):
        _violate(READ, "the candidate tried to read %s, which the sandbox hides" % real)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_WRITES = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.symlink", "os.link",
                "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.mkfifo",
                "os.mknod"}
_NETWORK = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
            "socket.gethostbyname", "socket.gethostbyaddr", "socket.__new__"}
# What a module body may never do; the compile after it runs ptxas, so processes are refused only here.
_PROCESSES = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
              "os.kill", "os.killpg", "pty.spawn", "ctypes.dlopen", "os.startfile", "sys.remote_exec"}


def _hook(event, args):
    phase = _state["phase"]
    if phase == "trusted":
        return
    if event == "open":
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(path, int):
            return
        writing = bool(flags & _WRITE_FLAGS) if isinstance(flags, int) and flags else \
            any(c in (mode or "") for c in "wax+")
        _check_path(path, writing)
    elif event in _PATH_WRITES:
        # os.remove(name, dir_fd=...) and its kind (shutil.rmtree walks by descriptor): a relative name
        # is relative to the descriptor's folder, not to the working folder.
        dir_fd = args[-1] if args and isinstance(args[-1], int) and not isinstance(args[-1], bool) else None
        for value in args[:2]:
            if isinstance(value, (str, bytes, os.PathLike)):
                name = os.fsdecode(value)
                if dir_fd is not None and dir_fd >= 0 and not os.path.isabs(name):
                    try:
                        name = os.path.join(os.readlink("/proc/self/fd/%d" % dir_fd), name)
                    except OSError:
                        pass
                _check_path(name, True)
    elif event in _NETWORK:
        if event == "socket.__new__" and len(args) > 1 and args[1] == getattr(__import__("socket"), "AF_UNIX", 1):
            return  # a local pair (multiprocessing's plumbing) reaches nothing: the wall has no sockets to reach
        _violate(NETWORK, "the candidate tried to use the network (%s)" % event)
    elif phase == "module" and event in _PROCESSES:
        _violate(PROCESS, "the candidate's module tried to start or signal a process (%s)" % event)


def confine(private_dir, out_dir, readable=(), memory_mb=None, cpu_seconds=None):
    """Confines this process for a candidate: call it after the trusted imports, before the module runs.
    `private_dir` becomes TMPDIR, HOME and Triton's cache; `out_dir` takes the reply and the cubin."""
    import tempfile
    for name in ("TMPDIR", "HOME", "TRITON_CACHE_DIR", "TRITON_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = private_dir if name != "TRITON_CACHE_DIR" else os.path.join(private_dir, "triton-cache")
    tempfile.tempdir = private_dir
    sys.dont_write_bytecode = True
    hidden = [root for root in os.environ.get("KL_SANDBOX_HIDDEN", "").split(os.pathsep) if root]
    _state["writable"] = tuple(_real(p) for p in (private_dir, out_dir) if p)
    _state["readable"] = tuple(_real(p) for p in list(readable) + [private_dir, out_dir] + sys.path if p)
    _state["hidden"] = tuple(_real(p) for p in hidden)
    _state["violations"] = []
    memory_mb = memory_mb or int(os.environ.get("KL_SANDBOX_MEMORY_MB", "8192"))
    try:  # above what is mapped already: the warm server's imports (torch) map gigabytes of address space
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = mapped + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError):
        pass
    if cpu_seconds:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds), int(cpu_seconds) + 5))
        except (OSError, ValueError):
            pass
    become_subreaper()
    if not _state["installed"]:
        sys.addaudithook(_hook)
        _state["installed"] = True


def enter(phase):
    """"module" while the candidate's module body runs, "compile" while Triton compiles it (ptxas may
    run), "trusted" after."""
    _state["phase"] = phase


def violation():
    """(kind, detail) of the first refused act, or None."""
    return _state["violations"][0] if _state["violations"] else None


def own_children():
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if fields[1] == me and fields[0] != "Z":
                found.append(int(entry))
        except (OSError, IndexError):
            continue
    return found


def end_strays(spare=()):
    """Kills every process this one still has as a child (a subreaper adopts its orphans), but
    `spare`; returns how many. Their own children become ours in turn, so it repeats until none."""
    previous = _state["phase"]
    _state["phase"] = "trusted"
    killed = set()
    deadline = time.monotonic() + 5.0
    try:
        while time.monotonic() < deadline:
            found = [pid for pid in own_children() if pid not in spare]
            if not found:
                break
            for pid in found:
                killed.add(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for pid in found:
                try:
                    os.waitpid(pid, 0)
                except OSError:
                    pass
    finally:
        _state["phase"] = previous
    return len(killed)
