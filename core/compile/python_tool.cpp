#include "core/compile/python_tool.h"

#include "core/compile/confinement.h"
#include "core/model/child_environment.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

// KL_SOURCE_DIR and KL_BINARY_DIR are defined only where KL_SOURCE_FALLBACK is on (development builds).

namespace kl {

namespace {

std::string readText(const std::filesystem::path& path, std::size_t keepLast = 0)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    if (keepLast && s.size() > keepLast)
        s = s.substr(s.size() - keepLast);
    return s;
}

// The file's bytes, opened without following a link (the last component) and only if it is a regular file.
bool readRegularFile(const std::filesystem::path& path, std::string& text)
{
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat info { };
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(fd);
        return false;
    }
    text.clear();
    char chunk[65536];
    ssize_t n = 0;
    while ((n = read(fd, chunk, sizeof chunk)) > 0)
        text.append(chunk, std::size_t(n));
    close(fd);
    return n == 0;
}

} // namespace

std::string pythonExecutable()
{
    const char* python = std::getenv("KL_PYTHON");
    return python && *python ? python : "python3";
}

std::filesystem::path pythonHelperPath(const std::string& fileName, const char* envVariable)
{
    namespace fs = std::filesystem;
    if (const char* path = std::getenv(envVariable); path && *path)
        return path;
    const fs::path relative = fs::path("python") / "kernelloop" / fileName;
    std::error_code error;
    const fs::path exe = fs::read_symlink("/proc/self/exe", error);
    if (error)
        return fs::path("/usr/share/kernelloop") / relative;
    const fs::path prefix = exe.parent_path().parent_path();
    // Installed (PREFIX/bin beside PREFIX/share/kernelloop), or a relocatable folder (bin/ beside python/).
    std::vector<fs::path> places { prefix / "share" / "kernelloop" / relative, prefix / relative };
#if defined(KL_SOURCE_DIR) && defined(KL_BINARY_DIR)
    // Development only: a program run from the build tree it was built in reads the source tree. An
    // installed copy never does (nor touches either tree: the test compares paths, both real), so a
    // test of the installed package sees what the package holds.
    const fs::path inside = exe.lexically_relative(KL_BINARY_DIR);
    if (!inside.empty() && *inside.begin() != "..")
        places.push_back(fs::path(KL_SOURCE_DIR) / relative);
#endif
    for (const auto& place : places)
        if (fs::is_regular_file(place, error))
            return place;
    return places.front();
}

std::string missingHelperMessage(const std::filesystem::path& helper, const char* envVariable)
{
    return "KernelLoop's helper " + helper.string()
        + " is missing: this installation is incomplete (reinstall the kernelloop package, or set " + envVariable
        + " to the helper)";
}

ToolFolder::ToolFolder(const std::string& request, const std::filesystem::path& parent)
{
    std::string pattern
        = ((parent.empty() ? std::filesystem::temp_directory_path() : parent) / "kl-tool-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) {
        m_error = std::string("cannot make a temporary folder: ") + std::strerror(errno);
        return;
    }
    m_dir = buffer.data();
    std::filesystem::create_directory(outDir());
    std::ofstream out(requestFile(), std::ios::binary);
    out << request;
}

ToolFolder::~ToolFolder()
{
    std::error_code ignored;
    if (valid())
        std::filesystem::remove_all(m_dir, ignored);
}

void ToolFolder::collect(PythonToolRun& run) const
{
    run.stderrText = readText(stderrFile(), 16 * 1024);
    const auto replyFile = outDir() / "reply.json";
    std::error_code listing;
    for (const auto& entry : std::filesystem::directory_iterator(outDir(), listing)) {
        std::error_code ignored;
        if (!entry.is_regular_file(ignored) || entry.is_symlink(ignored))
            continue;
        std::string text;
        if (!readRegularFile(entry.path(), text))
            continue;
        if (entry.path() == replyFile)
            run.reply = std::move(text);
        else
            run.files[entry.path().filename().string()] = std::move(text);
    }
}

HelperExec::HelperExec(std::vector<std::string> command, ConfinementMode mode)
    : m_command(std::move(command))
    , m_env(helperEnvironment(mode))
{
    for (const auto& part : m_command)
        m_argv.push_back(part.c_str());
    m_argv.push_back(nullptr);
    m_envp = environmentPointers(m_env);
}

std::vector<std::string> sandboxedPythonCommand(const std::string& python, const std::filesystem::path& script,
    const std::vector<std::string>& args, const std::filesystem::path& writable, bool dieWithParent, int infoFd)
{
    SandboxSpec spec;
    spec.writable = { writable };
    spec.readable = pythonPaths(python);
    spec.readable.push_back(std::filesystem::absolute(script).parent_path());
    if (const char* warm = std::getenv("KL_WARM_TOOL_DIR"); warm && *warm)
        spec.readable.emplace_back(warm);
    spec.dieWithParent = dieWithParent;
    spec.infoFd = infoFd;
    if (!dieWithParent)
        spec.wipe = { "/tmp", "/dev/shm" };
    std::vector<std::string> command { python, std::filesystem::absolute(script).string() };
    command.insert(command.end(), args.begin(), args.end());
    return sandboxedCommand(spec, command);
}

PythonToolRun runPythonTool(const std::string& python, const std::filesystem::path& script, const std::string& request,
    std::chrono::milliseconds limit, ConfinementMode mode)
{
    PythonToolRun run;
    const auto started = std::chrono::steady_clock::now();
    const ToolFolder folder(request);
    if (!folder.valid()) {
        run.stderrText = folder.error();
        return run;
    }
    const auto errFile = folder.stderrFile();
    const std::string scriptText = script.string(), requestText = folder.requestFile().string(),
                      replyText = folder.outDir().string();
    std::vector<std::string> command { python, scriptText, requestText, replyText };
    if (mode == ConfinementMode::Sandboxed) // the whole folder: the request, the reply and stderr.txt
        command = sandboxedPythonCommand(
            python, script, { requestText, replyText }, folder.requestFile().parent_path(), true);
    const HelperExec exec(std::move(command), mode);
    const std::string cannotRun = "cannot run " + exec.program() + ": "; // no allocation after fork
    const pid_t pid = fork();
    if (pid == 0) {
        const int err = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int null = open("/dev/null", O_RDWR);
        if (err >= 0)
            dup2(err, 2);
        if (null >= 0) {
            dup2(null, 0);
            dup2(err >= 0 ? err : null, 1); // the helper's prints are diagnostics, never the reply
        }
        setpgid(0, 0); // so that a timeout ends the helper's own children too (ptxas)
        execvpe(exec.program().c_str(), exec.argv(), exec.envp());
        const char* why = std::strerror(errno);
        if (write(2, cannotRun.data(), cannotRun.size()) < 0 || write(2, why, std::strlen(why)) < 0) { }
        _exit(127);
    }
    if (pid < 0) {
        run.stderrText = std::string("fork failed: ") + std::strerror(errno);
        return run;
    }
    int status = 0;
    while (true) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (std::chrono::steady_clock::now() - started > limit) {
            run.timedOut = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    run.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    folder.collect(run);
    run.started = !(run.exitStatus == 127 && run.stderrText.rfind("cannot run ", 0) == 0)
        && run.stderrText.rfind("bwrap: execvp ", 0) != 0; // the interpreter is missing inside the sandbox
    run.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return run;
}

} // namespace kl
