#include "core/compile/confinement.h"

#include "core/model/child_environment.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kl {

namespace {

namespace fs = std::filesystem;

std::atomic<int> g_allowed { -1 }; // -1: not set, the environment decides

std::string bwrapProgram()
{
    const char* path = std::getenv("KL_BWRAP");
    return path && *path ? path : "bwrap";
}

bool envTrue(const char* name)
{
    const char* value = std::getenv(name);
    return value && (std::strcmp(value, "1") == 0 || std::strcmp(value, "yes") == 0 || std::strcmp(value, "true") == 0);
}

struct Captured {
    bool ran = false;
    int status = -1;
    std::string out; // stdout and stderr together, the first 64 KiB
};

// Runs `argv` (no shell) with stdin from /dev/null; waits at most `limitMs`.
Captured capture(const std::vector<std::string>& argv, int limitMs)
{
    Captured c;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return c;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP); // a timeout ends what it started too
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> envStrings = childEnvironment(); // never a secret of ours
    const std::vector<char*> envp = environmentPointers(envStrings);
    pid_t pid = -1;
    const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        c.out = std::strerror(spawned);
        return c;
    }
    c.ran = true;
    int waited = 0;
    char chunk[4096];
    while (waited < limitMs) {
        pollfd p { fds[0], POLLIN, 0 };
        const int ready = poll(&p, 1, 100);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready == 0) {
            waited += 100;
            continue;
        }
        const ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n > 0) {
            if (c.out.size() < 64 * 1024)
                c.out.append(chunk, std::size_t(n));
        } else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    int status = 0;
    if (waited >= limitMs) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    waitpid(pid, &status, 0);
    c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return c;
}

bool under(const fs::path& path, const fs::path& root)
{
    const auto relative = path.lexically_relative(root);
    return !relative.empty() && *relative.begin() != "..";
}

bool hiddenBy(const std::vector<fs::path>& places, const fs::path& path)
{
    return std::any_of(places.begin(), places.end(), [&](const fs::path& place) { return under(path, place); });
}

std::string joined(const std::vector<fs::path>& paths)
{
    std::string text;
    for (const auto& p : paths)
        text += (text.empty() ? "" : ":") + p.string();
    return text;
}

ConfinementPolicy probe()
{
    ConfinementPolicy policy;
    const Captured c = capture(sandboxedCommand({}, { "true" }), 20000);
    if (c.ran && c.status == 0) {
        policy.mode = ConfinementMode::Sandboxed;
        return policy;
    }
    std::string why = c.out;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' '))
        why.pop_back();
    policy.detail = !c.ran
        ? "bubblewrap (" + bwrapProgram() + ") is not installed: " + why
        : "bubblewrap cannot make a sandbox here (status " + std::to_string(c.status) + ": " + why.substr(0, 300) + ")";
    policy.mode = unconfinedPythonAllowed() ? ConfinementMode::Unconfined : ConfinementMode::Refused;
    return policy;
}

} // namespace

void setUnconfinedPythonAllowed(bool allowed) { g_allowed = allowed ? 1 : 0; }

bool unconfinedPythonAllowed()
{
    const int set = g_allowed.load();
    return set >= 0 ? set == 1 : envTrue("KL_ALLOW_UNCONFINED_PYTHON");
}

ConfinementPolicy modelCodePolicy()
{
    static std::mutex mutex;
    static std::map<std::string, ConfinementPolicy> probed; // per bubblewrap: a test points KL_BWRAP elsewhere
    std::lock_guard lock(mutex);
    auto found = probed.find(bwrapProgram());
    if (found == probed.end())
        found = probed.emplace(bwrapProgram(), probe()).first;
    ConfinementPolicy policy = found->second;
    if (policy.mode != ConfinementMode::Sandboxed) // the opt-in may change after the probe
        policy.mode = unconfinedPythonAllowed() ? ConfinementMode::Unconfined : ConfinementMode::Refused;
    return policy;
}

std::vector<fs::path> hiddenPlaces()
{
    std::vector<fs::path> places { "/tmp", "/var/tmp", "/run", "/home", "/root" };
    if (const char* home = std::getenv("HOME"); home && *home && fs::path(home) != "/") {
        const fs::path h = fs::path(home).lexically_normal();
        if (std::none_of(places.begin(), places.end(), [&](const fs::path& p) { return under(h, p) || h == p; }))
            places.push_back(h);
    }
    return places;
}

std::vector<std::string> environmentStrings(const std::vector<std::pair<std::string, std::string>>& env)
{
    std::vector<std::string> strings;
    for (const auto& [name, value] : env)
        strings.push_back(name + "=" + value);
    return strings;
}

std::vector<std::string> helperEnvironment(ConfinementMode mode)
{
    return mode == ConfinementMode::Unconfined ? environmentStrings(sandboxEnvironment(false)) : childEnvironment();
}

std::vector<std::pair<std::string, std::string>> sandboxEnvironment(bool sandboxed)
{
    static const char* const exact[] = { "PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "PYTHONPATH",
        "PYTHONHASHSEED", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "KL_WARM_TOOL_DIR" };
    static const char* const prefixes[] = { "TRITON_", "KL_SANDBOX_", "KL_PROBE_" };
    std::vector<std::pair<std::string, std::string>> env;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text = *entry;
        const auto eq = text.find('=');
        if (eq == std::string::npos)
            continue;
        const std::string name = text.substr(0, eq);
        const bool listed = std::any_of(std::begin(exact), std::end(exact), [&](const char* e) { return name == e; })
            || std::any_of(
                std::begin(prefixes), std::end(prefixes), [&](const char* p) { return name.rfind(p, 0) == 0; });
        if (!listed || name == "TRITON_CACHE_DIR" || name == "TRITON_HOME" || isSecretVariable(name))
            continue;
        std::string value = text.substr(eq + 1);
        if (sandboxed && name == "PYTHONPATH") { // the sandbox starts in /tmp: relative entries would move
            std::string absolute;
            for (std::size_t from = 0; from <= value.size();) {
                const auto to = std::min(value.find(':', from), value.size());
                const std::string part = value.substr(from, to - from);
                if (!part.empty())
                    absolute += (absolute.empty() ? "" : ":") + fs::absolute(part).lexically_normal().string();
                from = to + 1;
            }
            value = absolute;
        }
        env.emplace_back(name, value);
    }
    if (sandboxed) {
        env.emplace_back("HOME", "/tmp");
        env.emplace_back("TMPDIR", "/tmp");
        env.emplace_back("KL_SANDBOXED", "1");
    } else {
        for (const char* name : { "HOME", "TMPDIR" })
            if (const char* value = std::getenv(name))
                env.emplace_back(name, value);
    }
    env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
    env.emplace_back("KL_SANDBOX_HIDDEN", joined(hiddenPlaces()));
    return env;
}

std::vector<std::string> sandboxedCommand(const SandboxSpec& spec, const std::vector<std::string>& command)
{
    // No capabilities, also when this program runs as root (bubblewrap keeps them for root otherwise):
    // without CAP_SYS_PTRACE a process cannot open another's /proc/PID/fd once that one is not dumpable.
    std::vector<std::string> argv { bwrapProgram(), "--unshare-all", "--new-session", "--cap-drop", "ALL" };
    if (spec.dieWithParent)
        argv.push_back("--die-with-parent");
    for (const char* option : { "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc" })
        argv.emplace_back(option);
    const auto places = hiddenPlaces();
    for (const auto& place : places) {
        std::error_code ignored;
        if (fs::is_directory(place, ignored))
            argv.insert(argv.end(), { "--tmpfs", place.string() });
    }
    for (const auto& path : spec.readable) {
        std::error_code ignored;
        const fs::path real = fs::weakly_canonical(path, ignored);
        if (!real.empty() && fs::exists(real, ignored) && hiddenBy(places, real))
            argv.insert(argv.end(), { "--ro-bind", real.string(), real.string() });
    }
    for (const auto& path : spec.writable)
        argv.insert(argv.end(), { "--bind", path.string(), path.string() });
    argv.push_back("--clearenv");
    auto env = sandboxEnvironment();
    if (!spec.wipe.empty()) {
        std::string wipe;
        for (const auto& folder : spec.wipe)
            wipe += (wipe.empty() ? "" : ":") + folder;
        env.emplace_back("KL_SANDBOX_WIPE", wipe);
    }
    for (const auto& [name, value] : env)
        argv.insert(argv.end(), { "--setenv", name, value });
    argv.insert(argv.end(), { "--chdir", "/tmp" });
    if (spec.infoFd >= 0)
        argv.insert(argv.end(), { "--info-fd", std::to_string(spec.infoFd) });
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

bool interpreterImports(const std::string& python, const std::string& module)
{
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, bool> known;
    std::lock_guard lock(mutex);
    const auto key = std::make_pair(python, module);
    if (const auto found = known.find(key); found != known.end())
        return found->second;
    const Captured c = capture({ python, "-c", "import " + module }, 60000);
    return known[key] = c.ran && c.status == 0;
}

std::vector<fs::path> pythonPaths(const std::string& python)
{
    static std::mutex mutex;
    static std::map<std::string, std::vector<fs::path>> known;
    std::lock_guard lock(mutex);
    if (const auto found = known.find(python); found != known.end())
        return found->second;
    std::vector<fs::path> paths;
    if (python.find('/') != std::string::npos)
        paths.push_back(fs::path(python).parent_path());
    const Captured c = capture({ python, "-c",
                                   "import json, sys; print(json.dumps([sys.prefix, sys.exec_prefix, sys.base_prefix]"
                                   " + [p for p in sys.path if p]))" },
        30000);
    const auto start = c.out.rfind("\n[");
    const auto parsed
        = nlohmann::json::parse(start == std::string::npos ? c.out : c.out.substr(start + 1), nullptr, false);
    if (parsed.is_array())
        for (const auto& entry : parsed)
            if (entry.is_string())
                paths.emplace_back(entry.get<std::string>());
    known[python] = paths;
    return paths;
}

} // namespace kl
