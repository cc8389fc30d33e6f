#pragma once
// For the suites that reach runners through real services started by CTest fixtures: the sshd on
// loopback (sshd_service.sh) and the one-node Slurm cluster (slurm_service.sh) write DIR/env.
#include "pool_support.h"

#include <QtTest/QTest>

#include <sys/stat.h>
#include <sys/types.h>

#include <csignal>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kl::test {

inline std::map<std::string, std::string> serviceEnv(const std::string& dir)
{
    std::map<std::string, std::string> values;
    std::ifstream in(dir + "/env");
    std::string line;
    while (std::getline(in, line))
        if (const auto eq = line.find('='); eq != std::string::npos)
            values[line.substr(0, eq)] = line.substr(eq + 1);
    return values;
}

// The runner double behind a script that sets its knobs: variables do not cross ssh. `byGpu`: knobs
// for the runner of one GPU only (the pool passes "--device N"). Each runner started appends its pid
// to DIR/runner-pids (exec keeps it), so that a test can end the runners an ssh session left behind.
inline std::string runnerScript(const QTemporaryDir& dir, const std::map<std::string, std::string>& env,
    const std::map<int, std::map<std::string, std::string>>& byGpu = {})
{
    const auto path = dir.filePath(QStringLiteral("remote-runner.sh")).toStdString();
    std::ofstream out(path);
    out << "#!/bin/sh\n";
    out << "echo $$ >> '" << dir.filePath(QStringLiteral("runner-pids")).toStdString() << "'\n";
    for (const auto& [k, v] : env)
        out << "export " << k << "='" << v << "'\n";
    for (const auto& [gpu, knobs] : byGpu) {
        out << "case \" $* \" in *\" --device " << gpu << " \"*)";
        for (const auto& [k, v] : knobs)
            out << " export " << k << "='" << v << "'\n";
        out << ";; esac\n";
    }
    out << "exec '" << KL_MODEL_RUNNER << "' \"$@\"\n";
    out.close();
    ::chmod(path.c_str(), 0755);
    return path;
}

// Ends the runners that runnerScript started in `dir` and that are still alive: a hung remote runner
// outlives its ssh session (sshd does not signal a command without a terminal).
inline int endLeftRunners(const QTemporaryDir& dir)
{
    std::ifstream in(dir.filePath(QStringLiteral("runner-pids")).toStdString());
    int ended = 0;
    for (pid_t pid = 0; in >> pid;) {
        // Only a runner double still: a pid of an exited runner may have been given to another process.
        std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
        const std::string command((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
        if (pid > 1 && command.rfind(KL_MODEL_RUNNER, 0) == 0 && ::kill(pid, SIGKILL) == 0)
            ++ended;
    }
    return ended;
}

// Runs a command line, returns its exit status and what it printed.
inline std::pair<int, std::string> shell(const std::string& command)
{
    std::string output;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p)
        return { -1, {} };
    char buffer[4096];
    while (const auto n = std::fread(buffer, 1, sizeof buffer, p))
        output.append(buffer, n);
    const int status = ::pclose(p);
    return { WIFEXITED(status) ? WEXITSTATUS(status) : -1, output };
}

// Waits (on the caller's thread) until `endpoint` (a prefix of its name) is busy with a job after
// `jobsDone` finished ones; false after `limit`.
inline bool waitBusy(const pool::RunnerPool& pool, const std::string& endpoint, int jobsDone,
    std::chrono::milliseconds limit = std::chrono::seconds(20))
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        for (const auto& s : pool.status())
            if (s.endpoint.rfind(endpoint, 0) == 0 && s.state == pool::RunnerState::Busy && s.jobsDone >= jobsDone)
                return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

} // namespace kl::test
