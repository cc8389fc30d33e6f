#pragma once
// For the suites that reach runners through real services started by CTest fixtures: the sshd on
// loopback (sshd_service.sh) and the one-node Slurm cluster (slurm_service.sh) write DIR/env.
#include "pool_support.h"

#include <QtTest/QTest>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
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

// The runner double behind a script that sets its knobs: variables do not cross ssh.
inline std::string runnerScript(const QTemporaryDir& dir, const std::map<std::string, std::string>& env)
{
    const auto path = dir.filePath(QStringLiteral("remote-runner.sh")).toStdString();
    std::ofstream out(path);
    out << "#!/bin/sh\n";
    for (const auto& [k, v] : env)
        out << "export " << k << "='" << v << "'\n";
    out << "exec '" << KL_MODEL_RUNNER << "' \"$@\"\n";
    out.close();
    ::chmod(path.c_str(), 0755);
    return path;
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
