#pragma once
// One of our Python helpers kept warm: `PYTHON SCRIPT --serve` imports what requests need once and
// forks a child per request (python/kernelloop/warm_tool.py), so a request costs the work, not the
// interpreter's start and imports. A run gives what runPythonTool gives for the same request: the
// same reply, files, exit status, stderr and time limit (the child is killed at the limit, the server
// lives on). Several requests at once get several servers, started in the background while the busy
// ones serve. A server that cannot start, or dies, costs that request a cold run, never a failure of its own.
#include "core/compile/python_tool.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kl {

class WarmPythonTool {
public:
    // At most `maxServers` processes; a request beyond them waits for one to be free. `mode` Sandboxed:
    // each server runs under bubblewrap (core/compile/confinement.h) with its own spool folder, the only
    // one it may write; Unconfined: with the allow-listed environment only. Either way the server kills a
    // request's child at its limit, and what it left behind, itself.
    WarmPythonTool(std::string python, std::filesystem::path script, int maxServers,
        ConfinementMode mode = ConfinementMode::Trusted);
    ~WarmPythonTool(); // ends every server (closes its input, then kills it if it lingers)
    WarmPythonTool(const WarmPythonTool&) = delete;
    WarmPythonTool& operator=(const WarmPythonTool&) = delete;

    PythonToolRun run(const std::string& request, std::chrono::milliseconds limit);

    // For tests and the log: servers started so far, and runs that fell back to a cold process.
    int serversStarted() const;
    int coldFallbacks() const;

    class Server;

private:
    std::unique_ptr<Server> acquire();
    void grow(); // one more server, started on its own thread; m_mutex held
    void release(std::unique_ptr<Server> server);

    std::string m_python;
    std::filesystem::path m_script;
    int m_maxServers;
    ConfinementMode m_mode;
    mutable std::mutex m_mutex;
    std::condition_variable m_freed;
    std::vector<std::unique_ptr<Server>> m_idle;
    int m_live = 0; // idle, in use and starting
    int m_starting = 0;
    std::vector<std::thread> m_starters;
    int m_started = 0;
    int m_cold = 0;
    bool m_startFailed = false; // a server never became ready: no more starts (none left: requests go cold)
};

} // namespace kl
