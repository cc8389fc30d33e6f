#include "core/pool/runner_endpoint.h"

#include "core/model/error.h"
#include "core/model/input_file.h"
#include "core/runnerclient/shell_words.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

namespace kl::pool {

namespace {

constexpr const char* kForms
    = "a runner endpoint is local:N, local:all, ssh:[user@]host[:gpu], slurm:ARGS or cmd:COMMAND LINE";

[[noreturn]] void bad(std::string_view text, const std::string& why)
{
    throw Error(
        "runner.bad-endpoint", {}, std::string(text), "\"" + std::string(text) + "\": " + why + " (" + kForms + ")");
}

std::optional<int> smallNumber(std::string_view text)
{
    if (text.empty() || text.size() > 4
        || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoi(std::string(text));
}

bool nameChars(std::string_view text, std::string_view extra)
{
    return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
    });
}

// Slurm arguments or a runner's command line as shell words; a control character (past tab) is
// never part of one.
std::vector<std::string> shellWords(std::string_view whole, std::string_view line, const char* what)
{
    for (const char c : line)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
            bad(whole, std::string("a control character in the ") + what);
    auto split = splitShellWords(line);
    if (!split.problem.empty())
        bad(whole, split.problem);
    return std::move(split.words);
}

} // namespace

std::string Endpoint::text() const
{
    switch (kind) {
    case EndpointKind::Local:
        return allLocal ? "local:all" : "local:" + std::to_string(gpu);
    case EndpointKind::Ssh:
        return "ssh:" + (user.empty() ? "" : user + "@")
            + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(gpu);
    case EndpointKind::Slurm: {
        std::string t = "slurm:";
        for (std::size_t i = 0; i < slurmArgs.size(); ++i)
            t += (i ? " " : "") + shellQuoted(slurmArgs[i]);
        return t;
    }
    case EndpointKind::Command: {
        std::string t = "cmd:";
        for (std::size_t i = 0; i < command.size(); ++i)
            t += (i ? " " : "") + shellQuoted(command[i]);
        return t;
    }
    }
    return {};
}

bool namesEndpoint(std::string_view text)
{
    return text.starts_with("local:") || text.starts_with("ssh:") || text.starts_with("slurm:")
        || text.starts_with("cmd:");
}

bool namesRunnerCommand(std::string_view runner)
{
    if (runner.find_first_of(" \t") == std::string_view::npos)
        return false;
    std::error_code ec; // a runner installed under a folder with a blank in its name stays a path
    return !std::filesystem::is_regular_file(std::filesystem::path(runner), ec);
}

namespace {

// The runner started by a command line's words: its program found here (the process is spawned
// without a PATH search), the runner's own path last (the launcher's to find: env, ssh's remote
// shell, ...), the words between them the launcher's arguments.
RunnerConfig startedByWords(const std::vector<std::string>& words, std::string_view line, RunnerConfig base)
{
    if (words.empty())
        bad(line, "an empty command line");
    const auto program = findProgram(words.front());
    if (!program)
        throw Error("runner.no-command", {}, std::string(line),
            "\"" + words.front() + "\" is not installed or not on PATH; the runner's command line starts with it");
    base.remoteShell = false;
    base.launcher.clear();
    if (words.size() == 1) {
        base.path = *program;
        return base;
    }
    base.launcher.push_back(program->string());
    base.launcher.insert(base.launcher.end(), words.begin() + 1, words.end() - 1);
    base.path = words.back();
    return base;
}

} // namespace

RunnerConfig runnerStartedBy(std::string_view runner, RunnerConfig base)
{
    if (!namesRunnerCommand(runner)) {
        base.path = std::string(runner);
        return base;
    }
    return startedByWords(shellWords(runner, runner, "runner's command line"), runner, std::move(base));
}

Endpoint parseEndpoint(std::string_view text)
{
    Endpoint e;
    const auto colon = text.find(':');
    if (colon == std::string_view::npos && !namesRunnerCommand(text))
        bad(text, "no kind before a colon");
    const auto kind = text.substr(0, colon);
    const auto rest = colon == std::string_view::npos ? std::string_view {} : text.substr(colon + 1);
    if (kind == "local") {
        e.kind = EndpointKind::Local;
        if (rest == "all") {
            e.allLocal = true;
            return e;
        }
        const auto n = smallNumber(rest);
        if (!n)
            bad(text, "the GPU after local: is a number (0, 1, ...) or all");
        e.gpu = *n;
        return e;
    }
    if (kind == "ssh") {
        e.kind = EndpointKind::Ssh;
        std::string_view target = rest;
        if (const auto at = target.find('@'); at != std::string_view::npos) {
            e.user = std::string(target.substr(0, at));
            if (!nameChars(e.user, "._-") || e.user[0] == '-')
                bad(text, "the user before @ is letters, digits, . _ and - (not first)");
            target = target.substr(at + 1);
        }
        std::string_view gpu;
        if (!target.empty() && target[0] == '[') { // [::1] or [::1]:2
            const auto close = target.find(']');
            if (close == std::string_view::npos)
                bad(text, "an unclosed [ around the host");
            e.host = std::string(target.substr(1, close - 1));
            const auto after = target.substr(close + 1);
            if (!after.empty() && after[0] != ':')
                bad(text, "text after the ] of the host");
            gpu = after.empty() ? std::string_view {} : after.substr(1);
            if (!nameChars(e.host, ":.%"))
                bad(text, "not an IPv6 address between [ and ]");
        } else {
            const auto c = target.find(':');
            e.host = std::string(target.substr(0, c));
            gpu = c == std::string_view::npos ? std::string_view {} : target.substr(c + 1);
            if (c != std::string_view::npos && gpu.empty())
                bad(text, "nothing after the colon where the GPU index goes");
            if (!nameChars(e.host, ".-_"))
                bad(text, e.host.empty() ? "no host" : "the host is letters, digits, . - and _");
        }
        if (e.host[0] == '-')
            bad(text, "a host cannot start with - (ssh would read it as an option)");
        if (!gpu.empty()) {
            const auto n = smallNumber(gpu);
            if (!n)
                bad(text, "the GPU after the host is a number");
            e.gpu = *n;
        }
        return e;
    }
    if (kind == "slurm") {
        e.kind = EndpointKind::Slurm;
        e.slurmArgs = shellWords(text, rest, "Slurm arguments");
        for (const auto& a : e.slurmArgs)
            if (a == "--no-shell" || a.rfind("--jobid", 0) == 0 || a == "--wrap" || a.rfind("--wrap=", 0) == 0)
                bad(text, "\"" + a + "\" is the pool's to set (it makes and reuses the allocation itself)");
        return e;
    }
    if (kind == "cmd" || namesRunnerCommand(text)) {
        e.kind = EndpointKind::Command;
        e.command = shellWords(text, kind == "cmd" ? rest : text, "runner's command line");
        if (e.command.empty())
            bad(text, "no command after cmd:");
        return e;
    }
    bad(text, "\"" + std::string(kind) + "\" is not local, ssh, slurm or cmd");
}

std::vector<Endpoint> readRunnersFile(const std::filesystem::path& file)
{
    std::istringstream in(readInputFile(file, 1 << 20, "runners"));
    std::vector<Endpoint> out;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#')
            continue;
        const auto last = line.find_last_not_of(" \t\r");
        try {
            out.push_back(parseEndpoint(std::string_view(line).substr(first, last - first + 1)));
        } catch (const Error& e) {
            throw Error(e.category(), file.string(), "line " + std::to_string(number), e.message());
        }
    }
    if (out.empty())
        throw Error("runner.bad-endpoint", file.string(), {}, "the runners file names no endpoint");
    return out;
}

int localGpuCount()
{
    std::error_code ec;
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
        (void)entry;
        ++count;
    }
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        const std::string v = visible;
        const int listed = v.empty() ? 0 : int(std::count(v.begin(), v.end(), ',')) + 1;
        count = std::min(count, listed);
    }
    return count;
}

std::vector<Endpoint> expandEndpoints(const std::vector<Endpoint>& endpoints, int localGpus)
{
    std::vector<Endpoint> out;
    std::set<std::string> seen;
    const auto add = [&](Endpoint e) {
        // Two runners on one GPU would time against each other; Slurm hands each step its own GPU.
        // KL_POOL_SHARE_GPUS=1 allows it for one measurement only: issue 14's "two runners on GPU 0
        // against one" (candidates per minute when compile/verify of one overlap the other's timing).
        const char* share = std::getenv("KL_POOL_SHARE_GPUS");
        const bool shared = share && std::string(share) == "1";
        if (e.kind != EndpointKind::Slurm && !seen.insert(e.text()).second && !shared)
            throw Error("runner.duplicate-endpoint", {}, e.text(),
                e.text()
                    + " is named twice: one timing job per GPU at a time (KL_POOL_SHARE_GPUS=1 allows it, for "
                      "measuring the pool only)");
        out.push_back(std::move(e));
    };
    for (const auto& e : endpoints) {
        if (!e.allLocal) {
            add(e);
            continue;
        }
        for (int gpu = 0; gpu < std::max(1, localGpus); ++gpu) {
            Endpoint one = e;
            one.allLocal = false;
            one.gpu = gpu;
            add(one);
        }
    }
    return out;
}

std::optional<std::filesystem::path> findProgram(const std::string& name)
{
    if (name.empty())
        return std::nullopt;
    if (name.find('/') != std::string::npos)
        return ::access(name.c_str(), X_OK) == 0 ? std::optional<std::filesystem::path>(name) : std::nullopt;
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate))
            return candidate;
    }
    return std::nullopt;
}

RunnerConfig runnerConfigFor(const Endpoint& endpoint, const EndpointOptions& options, const std::string& slurmJob)
{
    RunnerConfig config = options.base;
    config.deviceIndex = endpoint.gpu;
    const auto program = [&](const std::string& name, const char* category, const char* what) {
        const auto found = findProgram(name);
        if (!found)
            throw Error(category, {}, endpoint.text(),
                "\"" + name + "\" is not installed or not on PATH; " + what + " endpoints need it");
        return found->string();
    };
    switch (endpoint.kind) {
    case EndpointKind::Local:
        config = runnerStartedBy(options.localRunner.string(), config);
        break;
    case EndpointKind::Command:
        config = startedByWords(endpoint.command, endpoint.text(), config);
        break;
    case EndpointKind::Ssh: {
        config.path = options.remoteRunner;
        config.remoteShell = true;
        // BatchMode: never a password or host-key prompt (there is no terminal to answer it).
        config.launcher = { program(options.ssh, "runner.no-ssh", "ssh"), "-T", "-o", "BatchMode=yes", "-o",
            "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3" };
        for (const auto& o : options.sshOptions) {
            config.launcher.push_back("-o");
            config.launcher.push_back(o);
        }
        config.launcher.push_back("--");
        config.launcher.push_back(endpoint.user.empty() ? endpoint.host : endpoint.user + "@" + endpoint.host);
        break;
    }
    case EndpointKind::Slurm:
        config.path = options.remoteRunner;
        config.deviceIndex = 0; // the step sees only its own GPU
        config.launcher = { program(options.srun, "runner.no-slurm", "slurm"), "--jobid=" + slurmJob, "--ntasks=1",
            "--nodes=1", "--quiet" };
        if (!options.slurmGres.empty())
            config.launcher.push_back("--gres=" + options.slurmGres);
        break;
    }
    return config;
}

} // namespace kl::pool
