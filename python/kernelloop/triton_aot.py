#!/usr/bin/env python3
"""Compiles one Triton kernel of a KernelLoop candidate ahead of time, with no GPU launch.

    python3 triton_aot.py REQUEST.json OUT_DIR
    python3 triton_aot.py --serve        (many requests, imports paid once: warm_tool.py)

REQUEST (written by core/compile/triton_compiler.cpp):
    {"source": "...", "file": "candidate.py", "kernel": "ln_gelu", "signature": ["*fp16:16", "i32:16", "i32"],
     "constexprs": {"BLOCK_N": 1024}, "num_warps": 4, "num_stages": 3, "capability": 90, "line": 12}
  A ":16" after a type is Triton's own AOT notation (triton/tools/compile.py): the value is a multiple
  of 16 (pointers: 16-byte aligned) where it matters, at the problem's main sizes.
OUT_DIR/reply.json:
    {"ok": true, "triton_version", "metadata": {...}, "ptx", "ptxas_log", "implicit_params": [...],
     "params": [...], "compile_ms", "num_warps", "num_stages", "target",
     "specialisation": {"divisible": ["N", ...], "guard": "in-kernel", "dropped": null}}  and OUT_DIR/kernel.cubin
  or {"ok": false, "stage", "exception", "message", "line", "column", "traceback"}.
The C++ side names the error (syntax, type-mismatch, ...); this side finds the candidate's line.

Specialisation, as Triton's JIT does it: the JIT compiles one kernel per launch with every pointer
and every integer argument that is a multiple of 16 marked so (tt.divisibility), which is what lets
it prove 16-byte alignment and a mask constant over 8 halves: vectorised loads and stores. Ahead of
time there is no launch to look at, so the pointers are marked (the runner allocates every buffer
256-byte aligned, as PyTorch's allocator does) and the integers named ":16" get a guard in the kernel
itself: a wrapper of the candidate's name tests them at each launch and runs the candidate's body
inlined twice, once with them marked (they are rewritten as (v // 16) * 16, which equals v there and
which Triton's alignment analysis knows is a multiple of 16) and once as they are. A launch size that
breaks the assumption (an odd fuzz size, a padded row) takes the general copy: never a wrong result.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import confine

CANDIDATE_MODULE = "kl_candidate"


def def_line(source, kernel):
    """1-based line of `def KERNEL(` in the file, 0 when absent."""
    for number, text in enumerate(source.splitlines(), start=1):
        if re.match(r"\s*def\s+" + re.escape(kernel) + r"\s*\(", text):
            return number
    return 0


def error_line(error, source, kernel, path):
    """The candidate line an exception points at: a SyntaxError's own line, Triton's
    CompilationError node (counted from the kernel's def), or the last traceback frame in the file."""
    if isinstance(error, SyntaxError) and getattr(error, "filename", None) in (path, "<unknown>", None):
        return error.lineno or 0, error.offset or 0
    node = getattr(error, "node", None)
    if node is not None and getattr(node, "lineno", None):
        start = def_line(source, kernel)
        return (start + node.lineno - 1 if start else node.lineno), getattr(node, "col_offset", 0) + 1
    match = re.search(r"^at (\d+):(\d+):", str(error), re.MULTILINE)
    if match:
        start = def_line(source, kernel)
        line = int(match.group(1))
        return (start + line - 1 if start else line), int(match.group(2)) + 1
    line = 0
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line, 0


def exception_name(error):
    """A CompilationError wraps the real one (NameError, TypeError, ...): name that one."""
    inner = error.__cause__ or error.__context__
    name = type(error).__name__
    if name == "CompilationError" and inner is not None:
        return type(inner).__name__
    text = str(error)
    for known in ("NameError", "TypeError", "ValueError", "NotImplementedError", "AssertionError"):
        if known + "(" in text or known + ":" in text:
            return known if name in ("CompilationError", "CompileTimeAssertionFailure") else name
    return name


def failure(stage, error, source, kernel, path, started):
    line, column = error_line(error, source, kernel, path)
    message = str(error).strip()
    inner = error.__cause__ or error.__context__
    if inner is not None and str(inner) and str(inner) not in message:  # the reason, not only the excerpt
        message += "\n%s: %s" % (type(inner).__name__, inner)
    deepest = error
    for _ in range(16):  # a chain, never a cycle, but bounded all the same
        if (deepest.__cause__ or deepest.__context__) is None:
            break
        deepest = deepest.__cause__ or deepest.__context__
    reason = [text for text in str(deepest).strip().splitlines() if text.strip()]
    if reason and reason[-1].strip() not in message:  # Triton's nested errors: the innermost says why
        message += "\n" + reason[-1].strip()
    return {"ok": False, "stage": stage, "exception": exception_name(error), "message": message,
            "line": line, "column": column, "traceback": traceback.format_exc(limit=8),
            "compile_ms": (time.perf_counter() - started) * 1e3}


def plain_failure(exception, message, line=0):
    return {"ok": False, "stage": "request", "exception": exception, "message": message, "line": line, "column": 0}


# Shared memory one block may opt in to, by compute capability (the CUDA programming guide's table):
# the limit Triton's JIT checks at load time, checked here at compile time since no device is asked.
SHARED_MEMORY_OPT_IN = {70: 98304, 72: 49152, 75: 65536, 80: 166912, 86: 101376, 87: 166912, 89: 101376,
                        90: 232448, 100: 232448, 103: 232448, 120: 101376}


def shared_memory_limit(capability):
    """Bytes of shared memory a block may use on this capability; 0 when unknown (not checked)."""
    return SHARED_MEMORY_OPT_IN.get(int(capability), 0)


def find_ptxas():
    try:
        from triton.backends.nvidia import compiler as nv
        getter = getattr(nv, "get_ptxas", None)
        if getter is not None:
            try:
                tool = getter()
            except TypeError:
                tool = getter(90)
            path = getattr(tool, "path", None) or (tool[0] if isinstance(tool, tuple) else None)
            if path:
                return path
        finder = getattr(nv, "_path_to_binary", None)
        if finder is not None:
            return finder("ptxas")[0]
    except Exception:  # noqa: BLE001 - any failure here only costs the register report
        pass
    return shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"


def ptxas_report(ptx):
    """ptxas -v on Triton's own PTX: registers, spills, stack, in the layout our C++ parser reads."""
    target = re.search(r"^\.target\s+(sm_\w+)", ptx, re.MULTILINE)
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "kernel.ptx")
        with open(source, "w") as out:
            out.write(ptx)
        try:
            done = subprocess.run([find_ptxas(), "-v", "--gpu-name", target.group(1) if target else "sm_90a", source,
                                   "-o", os.path.join(folder, "kernel.cubin")], capture_output=True, text=True,
                                  timeout=120)
            return done.stderr + done.stdout
        except Exception as error:  # noqa: BLE001
            return "ptxas -v did not run: %s" % error


def split_type(kind):
    """"i32:16" -> ("i32", True); "*fp16" -> ("*fp16", False)."""
    base, _, hint = kind.partition(":")
    return base, hint == "16"


def wrapper_source(kernel, names, constexpr_names, divisible):
    """A @triton.jit of the candidate kernel's name and parameters that tests the `divisible`
    integers at each launch and calls the candidate (Triton inlines it) with them marked as
    multiples of 16 where they are, and unchanged where not."""
    params = ", ".join(name + (": tl.constexpr" if name in constexpr_names else "") for name in names)
    guard = " & ".join("((%s %% 16) == 0)" % name for name in divisible)
    marked = ", ".join("%s=%s" % (name, "(%s // 16) * 16" % name if name in divisible else name) for name in names)
    plain = ", ".join("%s=%s" % (name, name) for name in names)
    return ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef %s(%s):\n"
            "    if %s:\n        _kl_candidate_kernel(%s)\n    else:\n        _kl_candidate_kernel(%s)\n"
            % (kernel, params, guard, marked, plain))


def load_wrapper(folder, kernel, fn, names, constexpr_names, divisible):
    """The wrapper as a JIT function (Triton reads its source from the file, so it is a file)."""
    import importlib.util
    path = os.path.join(folder, "kl_specialised.py")
    with open(path, "w") as out:
        out.write(wrapper_source(kernel, names, constexpr_names, divisible))
    spec = importlib.util.spec_from_file_location("kl_specialised", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__["_kl_candidate_kernel"] = fn
    sys.modules["kl_specialised"] = module
    spec.loader.exec_module(module)
    return getattr(module, kernel)


def compile_request(request, out_dir):
    """The compile, confined (confine.py): a refused act or a process left running replaces whatever
    the compile said, since a candidate may catch the refusal and carry on."""
    started = time.perf_counter()
    try:
        import triton  # noqa: F401 - trusted imports first: the candidate's module finds them loaded
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except Exception as error:  # noqa: BLE001
        return plain_failure("NeedsTriton", "needs Triton: %s cannot import it (%s)" % (sys.executable, error))
    private = tempfile.mkdtemp(prefix="kl-private-")
    confine.confine(private, out_dir, readable=[os.path.dirname(os.path.abspath(__file__))],
                    cpu_seconds=request.get("cpu_seconds"))
    try:
        reply = compile_confined(request, out_dir, private, started)
    except MemoryError:
        reply = plain_failure("MemoryError", "the candidate ran out of its memory bound (%s MiB above the helper's "
                              "own)" % os.environ.get("KL_SANDBOX_MEMORY_MB", "8192"))
        reply["stage"] = "import"
    finally:
        confine.enter("trusted")
    strays = confine.end_strays()
    refused = confine.violation()
    if refused or strays:
        kind, detail = refused or (confine.PROCESS, "the candidate left %d process%s running after its compile "
                                   "(killed)" % (strays, "" if strays == 1 else "es"))
        reply = {"ok": False, "stage": "sandbox", "exception": "SandboxViolation", "sandbox": kind,
                 "message": detail, "line": reply.get("line", 0) if not reply.get("ok") else 0, "column": 0,
                 "compile_ms": (time.perf_counter() - started) * 1e3}
        for name in os.listdir(out_dir):  # nothing of a refused candidate is used
            if name != "reply.json":
                os.remove(os.path.join(out_dir, name))
    shutil.rmtree(private, ignore_errors=True)
    return reply


def compile_confined(request, out_dir, private, started):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    source, kernel = request["source"], request["kernel"]
    folder = tempfile.mkdtemp(prefix="kl-triton-", dir=private)
    path = os.path.join(folder, os.path.basename(request.get("file") or "candidate.py"))
    if not path.endswith(".py"):
        path += ".py"
    with open(path, "w") as out:
        out.write(source)
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location(CANDIDATE_MODULE, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[CANDIDATE_MODULE] = module
        confine.enter("module")
        spec.loader.exec_module(module)
    except MemoryError:
        raise
    except BaseException as error:  # noqa: BLE001 - the candidate's own code: report, never crash
        return failure("import", error, source, kernel, path, started)
    finally:
        confine.enter("compile")

    fn = getattr(module, kernel, None)
    while fn is not None and not isinstance(fn, triton.runtime.JITFunction) and hasattr(fn, "fn"):
        fn = fn.fn  # through @triton.autotune / @triton.heuristics to the JIT function
    if fn is None or not isinstance(fn, triton.runtime.JITFunction):
        return plain_failure("MissingKernel", "the file defines no @triton.jit function named %s" % kernel,
                             request.get("line", 0))

    constexprs = dict(request.get("constexprs", {}))
    names = list(fn.arg_names)
    unknown = [name for name in constexprs if name not in names]
    if unknown:
        return plain_failure("TypeError", "%s has no parameter %s (its parameters: %s)"
                             % (kernel, ", ".join(unknown), ", ".join(names)), request.get("line", 0))
    positional = [name for name in names if name not in constexprs]
    hinted = [split_type(kind) for kind in request["signature"]]
    types = [kind for kind, _ in hinted]
    if len(positional) != len(types):
        return plain_failure("TypeError", "the launch passes %d positional arguments but %s takes %d besides "
                             "the constexprs given (%s)" % (len(types), kernel, len(positional),
                                                            ", ".join(positional)), request.get("line", 0))
    signature = {}
    for name in names:
        signature[name] = "constexpr" if name in constexprs else types[positional.index(name)]
    # The runner's buffers start 256-byte aligned, as PyTorch's do: say so, as Triton's JIT would.
    attrs = {(names.index(name),): [["tt.divisibility", 16]]
             for name, kind in zip(positional, types) if kind.startswith("*")}
    options = {"num_warps": int(request.get("num_warps", 4)), "num_stages": int(request.get("num_stages", 3))}
    target = GPUTarget("cuda", int(request.get("capability", 90)), 32)
    divisible = [name for name, (kind, hint) in zip(positional, hinted) if hint and not kind.startswith("*")
                 and kind.lstrip("u").startswith("i")]
    specialisation = {"divisible": divisible, "guard": "in-kernel" if divisible else None, "dropped": None}
    dropped = None
    compiled = None
    if divisible:
        try:
            wrapper = load_wrapper(folder, kernel, fn, names, set(constexprs), divisible)
            compiled = triton.compile(ASTSource(wrapper, signature, constexprs, attrs), target=target,
                                      options=options)
        except BaseException as error:  # noqa: BLE001 - fall back to the candidate as written, below
            specialisation.update({"divisible": [], "guard": None,
                                   "dropped": "%s: %s" % (type(error).__name__, str(error).strip()[-400:])})
            compiled = None
    try:
        if compiled is None:
            try:
                compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target,
                                          options=options)
            except (KeyError, AttributeError, AssertionError) as error:
                tb = traceback.extract_tb(error.__traceback__)
                if any(frame.filename == path for frame in tb):
                    raise
                dropped = "%s: %s" % (type(error).__name__, error)  # another attrs format: compile without hints
                compiled = triton.compile(ASTSource(fn, signature, constexprs), target=target, options=options)
    except BaseException as error:  # noqa: BLE001
        return failure("compile", error, source, kernel, path, started)
    compile_ms = (time.perf_counter() - started) * 1e3

    metadata = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    metadata = json.loads(json.dumps(metadata, default=str))
    implicit = [{"name": "global_scratch", "size": int(metadata.get("global_scratch_size", 0) or 0),
                 "align": int(metadata.get("global_scratch_align", 1) or 1)}]
    if "profile_scratch_size" in metadata:
        implicit.append({"name": "profile_scratch", "size": int(metadata.get("profile_scratch_size", 0) or 0),
                         "align": int(metadata.get("profile_scratch_align", 1) or 1)})
    shared = int(metadata.get("shared", 0) or 0)
    limit = shared_memory_limit(target.arch)
    if limit and shared > limit:  # what Triton's JIT raises when it loads such a kernel on the device
        shutil.rmtree(folder, ignore_errors=True)
        reply = plain_failure("OutOfResources", "out of resource: shared memory, Required: %d, Hardware limit: %d. "
                              "Reducing block sizes or `num_stages` may help." % (shared, limit),
                              def_line(source, kernel))
        reply.update({"stage": "compile", "compile_ms": compile_ms, "metadata": metadata})
        return reply
    ptx = compiled.asm.get("ptx", "")
    with open(os.path.join(out_dir, "kernel.cubin"), "wb") as out:
        out.write(compiled.asm["cubin"])
    shutil.rmtree(folder, ignore_errors=True)
    return {"ok": True, "triton_version": triton.__version__, "metadata": metadata, "ptx": ptx,
            "ptxas_log": ptxas_report(ptx), "implicit_params": implicit,
            "params": [{"name": name, "type": signature[name]} for name in positional]
                      + [{"name": extra["name"], "type": "*i8"} for extra in implicit],
            "num_warps": options["num_warps"], "num_stages": options["num_stages"],
            "target": "cuda:%d" % target.arch, "compile_ms": compile_ms, "attrs_dropped": dropped,
            "specialisation": specialisation}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as request_file:
        request = json.load(request_file)
    try:
        reply = compile_request(request, argv[2])
    except BaseException as error:  # noqa: BLE001 - our own bug: still a reply, marked as such
        reply = {"ok": False, "stage": "helper", "exception": "InternalError",
                 "message": "[internal] the Triton helper failed: %s" % error, "traceback": traceback.format_exc()}
    if "triton_version" not in reply:
        try:
            import triton
            reply["triton_version"] = triton.__version__
        except Exception:  # noqa: BLE001
            pass
    with open(os.path.join(argv[2], "reply.json"), "w") as out:
        json.dump(reply, out)
    return 0


# What a candidate imports: Triton, and torch.compile's runtime for a kernel written by Inductor (its
# import alone costs a fresh Python 9-10 s). `--serve` imports them once (warm_tool.py).
PRELOAD = ("triton", "triton.language", "triton.compiler", "triton.backends.nvidia.compiler", "torch",
           "torch._inductor.runtime.triton_helpers", "torch._inductor.runtime.triton_heuristics")

if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        import warm_tool
        sys.exit(warm_tool.serve(main, PRELOAD))
    sys.exit(main(sys.argv))
