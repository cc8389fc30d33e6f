#pragma once
// The sandbox for code a model wrote. A Triton candidate is a Python file whose module is executed to
// compile it; that execution runs under bubblewrap: no network, no home directory, the system
// read-only, a private /tmp, its own process tree, and no variable of ours but an allow-list (an API
// key never reaches it). Bounds on memory, CPU and strays, and the naming of what was refused, are the
// in-process half (python/kernelloop/confine.py). docs/llm.md, "What runs where", says why bubblewrap
// and not an AST compile: Triton's JIT needs the module's globals (constexprs, helpers, imports).
// Where bubblewrap cannot run, model-written Python is refused unless the engineer opted in.
#include <filesystem>
#include <string>
#include <vector>

namespace kl {

enum class ConfinementMode {
    Trusted, // our own helper on our own inputs: runs as it is
    Sandboxed, // model-written code, and bubblewrap works here
    Unconfined, // it does not, and the engineer opted in: the in-process half only
    Refused, // it does not, and no opt-in: the compile is refused (CompileErrorKind::SandboxUnavailable)
};

struct ConfinementPolicy {
    ConfinementMode mode = ConfinementMode::Refused;
    std::string detail; // why bubblewrap is not available; empty when it is
};

// The opt-in, for the whole process: `--allow-unconfined-python` (kernelloop-cli), the GUI's setting,
// or KL_ALLOW_UNCONFINED_PYTHON=1 in the environment.
void setUnconfinedPythonAllowed(bool allowed);
bool unconfinedPythonAllowed();

// What happens to model-written Python here. bubblewrap is probed once (a trivial run with the
// options sandboxedCommand uses): $KL_BWRAP, else `bwrap` on the PATH.
ConfinementPolicy modelCodePolicy();

struct SandboxSpec {
    std::vector<std::filesystem::path> writable; // bound read-write at their own paths (the work folders)
    std::vector<std::filesystem::path> readable; // bound read-only where a hidden place covers them
    // Linux signals the parent-death signal when the forking *thread* ends: off for a server started
    // from a thread that ends (warm_python_tool.cpp), which uses infoFd to kill the sandbox instead.
    bool dieWithParent = true;
    int infoFd = -1; // bubblewrap writes {"child-pid": N} there: the sandbox's first process, as we see it
    std::vector<std::string> wipe; // folders the warm server empties after each request (KL_SANDBOX_WIPE)
};

// bubblewrap's command line for `command`, then `command`.
std::vector<std::string> sandboxedCommand(const SandboxSpec& spec, const std::vector<std::string>& command);

// The places the sandbox hides: /tmp, /var/tmp, /run, /home, /root and $HOME.
std::vector<std::filesystem::path> hiddenPlaces();

// The folders an interpreter reads its modules from (sys.prefix, sys.path; PYTHONPATH included), probed
// once per interpreter, so that a venv or a user site under a hidden place stays readable.
std::vector<std::filesystem::path> pythonPaths(const std::string& python);

// Whether `python` can import `module` (a trusted one-line run, no candidate code), asked once per pair:
// where there is no sandbox, a missing Triton is said as such rather than as a refusal to run it.
bool interpreterImports(const std::string& python, const std::string& module);

// The environment a helper running model-written code gets: the allow-list of this process's variables
// (PATH, locale, PYTHONPATH, CUDA_*, TRITON_*, ...), and, in the sandbox, HOME and TMPDIR inside. Never a
// key, also unconfined.
std::vector<std::pair<std::string, std::string>> sandboxEnvironment(bool sandboxed = true);
// The same as NAME=VALUE strings, for execve.
std::vector<std::string> environmentStrings(const std::vector<std::pair<std::string, std::string>>& env);

// What a helper process is started with, as NAME=VALUE: Unconfined, the allow-list above; otherwise this
// process's environment less its secrets (core/model/child_environment.h; bubblewrap then clears it).
std::vector<std::string> helperEnvironment(ConfinementMode mode);

} // namespace kl
