#pragma once
// Runs one of our Python helpers (python/kernelloop/*.py) as a child process:
//   PYTHON SCRIPT REQUEST.json OUT_DIR
// the request goes in a file, the helper writes reply.json (and any binary, e.g. kernel.cubin) into
// OUT_DIR, stderr is kept for the message. A helper that hangs is
// killed at the time limit. No shell is involved.
#include "core/compile/confinement.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kl {

struct PythonToolRun {
    bool started = false; // false: the interpreter could not be executed (see stderrText)
    bool timedOut = false;
    int exitStatus = -1; // the child's exit status, or 128 + signal
    std::string reply; // OUT_DIR/reply.json (empty when the helper wrote none)
    std::map<std::string, std::string> files; // every other file in OUT_DIR by name, its bytes
    std::string stderrText; // its last 16 KiB
    double millis = 0.0;
    int strays = 0; // processes the warm server killed after the run: the request's child left them running
};

// Where one of our helpers is: $ENV_VARIABLE, else python/kernelloop/FILE relative to the executable
// (../share/kernelloop/python, ../python); in development builds (KL_SOURCE_FALLBACK) also the source
// tree, for a program run from its own build tree only. Not found: the first of those places.
std::filesystem::path pythonHelperPath(const std::string& fileName, const char* envVariable);
// "KernelLoop's helper PATH is missing: this installation is incomplete (...)": a missing helper is
// a broken installation, never a missing PyTorch or Triton.
std::string missingHelperMessage(const std::filesystem::path& helper, const char* envVariable);
// The Python that runs the helpers: $KL_PYTHON, else "python3".
std::string pythonExecutable();

// `mode` (core/compile/confinement.h): Sandboxed runs the helper under bubblewrap, its folder the only one
// it may write; Unconfined (the engineer's opt-in) as it is but with the allow-listed environment only.
PythonToolRun runPythonTool(const std::string& python, const std::filesystem::path& script, const std::string& request,
    std::chrono::milliseconds limit, ConfinementMode mode = ConfinementMode::Trusted);

// A helper's command line and environment, made before fork (nothing is allocated between fork and exec):
// the environment never holds a secret of ours, and unconfined model-written code gets the allow-list only.
class HelperExec {
public:
    HelperExec(std::vector<std::string> command, ConfinementMode mode);
    HelperExec(const HelperExec&) = delete;
    HelperExec& operator=(const HelperExec&) = delete;
    const std::string& program() const { return m_command.front(); }
    char* const* argv() const { return const_cast<char* const*>(m_argv.data()); }
    char* const* envp() const { return m_envp.data(); }

private:
    std::vector<std::string> m_command, m_env;
    std::vector<const char*> m_argv;
    std::vector<char*> m_envp;
};

// The command that runs SCRIPT ARGS... under python in the sandbox: writable `writable`, readable the
// script's folder and the interpreter's paths. Shared by the cold run and the warm server.
std::vector<std::string> sandboxedPythonCommand(const std::string& python, const std::filesystem::path& script,
    const std::vector<std::string>& args, const std::filesystem::path& writable, bool dieWithParent, int infoFd = -1);

// The folder one helper run works in: request.json, out/ (the reply and files), stderr.txt. Removed
// when it goes out of scope. Shared by the cold run above and the warm one (warm_python_tool.h).
class ToolFolder {
public:
    // In `parent` (the temporary folder when empty). valid() false, and error() why, when it cannot be made.
    explicit ToolFolder(const std::string& request, const std::filesystem::path& parent = {});
    ~ToolFolder();
    ToolFolder(const ToolFolder&) = delete;
    ToolFolder& operator=(const ToolFolder&) = delete;

    bool valid() const { return !m_dir.empty(); }
    const std::string& error() const { return m_error; }
    std::filesystem::path requestFile() const { return m_dir / "request.json"; }
    std::filesystem::path outDir() const { return m_dir / "out"; }
    std::filesystem::path stderrFile() const { return m_dir / "stderr.txt"; }
    // The reply, the other files and the last 16 KiB of stderr, into `run`. Regular files only, never
    // through a link: a confined helper could point one at a file of the engineer's.
    void collect(PythonToolRun& run) const;

private:
    std::filesystem::path m_dir;
    std::string m_error;
};

} // namespace kl
