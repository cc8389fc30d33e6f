#include "core/compile/warm_python_tool.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kl {

namespace {

using Clock = std::chrono::steady_clock;

// A server that imports torch._inductor takes ~10 s to say ready; far past that it is stuck.
constexpr auto kReadyLimit = std::chrono::seconds(120);
// "started" follows a request at once; "ended" follows a kill at once.
constexpr auto kReplyLimit = std::chrono::seconds(10);

// Writes `text` without letting a closed pipe raise SIGPIPE in this process: the signal is blocked in
// this thread for the write and a pending one consumed, so that a dead server is an EPIPE, not a crash.
bool writeAll(int fd, const std::string& text)
{
    sigset_t pipe, old;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    bool ok = true;
    for (std::size_t done = 0; ok && done < text.size();) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n > 0)
            done += std::size_t(n);
        else if (n < 0 && errno == EINTR)
            continue;
        else
            ok = false;
    }
    if (!ok) {
        const timespec none { 0, 0 };
        sigtimedwait(&pipe, nullptr, &none);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return ok;
}

} // namespace

class WarmPythonTool::Server {
public:
    ~Server() { stop(); }

    bool start(const std::string& python, const std::filesystem::path& script, ConfinementMode mode)
    {
        const bool sandboxed = mode == ConfinementMode::Sandboxed;
        int toServer[2], fromServer[2], info[2] = { -1, -1 };
        if (pipe2(toServer, O_CLOEXEC) != 0)
            return false;
        if (pipe2(fromServer, O_CLOEXEC) != 0) {
            close(toServer[0]);
            close(toServer[1]);
            return false;
        }
        std::vector<std::string> command { python, script.string(), "--serve" };
        if (sandboxed) {
            if (!makeSpool() || pipe2(info, O_CLOEXEC) != 0) {
                for (int fd : { toServer[0], toServer[1], fromServer[0], fromServer[1] })
                    close(fd);
                return false;
            }
            // No parent-death signal (the starting thread ends): the sandbox is ended through its first
            // process, whose pid bubblewrap writes on fd 3.
            command = sandboxedPythonCommand(python, script, { "--serve" }, m_spool, false, 3);
        }
        const HelperExec exec(std::move(command), mode);
        m_pid = fork();
        if (m_pid == 0) {
            // Only async-signal-safe calls until exec: the parent may be multithreaded. No parent-death
            // signal: Linux sends it when the forking *thread* ends (a compile-ahead thread does); the
            // server ends instead at the end of its input, when this program closes the pipe or dies.
            setpgid(0, 0);
            dup2(toServer[0], 0);
            dup2(fromServer[1], 1);
            if (info[1] >= 0)
                dup2(info[1], 3); // dup2 clears close-on-exec on the copy
            const int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 2); // the server's own noise; each request's stderr has its own file
            execvpe(exec.program().c_str(), exec.argv(), exec.envp());
            _exit(127);
        }
        close(toServer[0]);
        close(fromServer[1]);
        if (info[1] >= 0)
            close(info[1]);
        m_in = toServer[1];
        m_out = fromServer[0];
        if (m_pid < 0) {
            if (info[0] >= 0)
                close(info[0]);
            stop();
            return false;
        }
        if (info[0] >= 0) {
            m_sandboxPid = readSandboxPid(info[0]);
            close(info[0]);
        }
        std::string line;
        return readLine(line, Clock::now() + kReadyLimit) && line == "ready";
    }

    const std::filesystem::path& spool() const { return m_spool; }

    enum class Outcome { Ended, TimedOut, Died };
    struct Result {
        Outcome outcome = Outcome::Died;
        int status = -1;
        int strays = 0;
    };

    // The server kills a child at `limit` itself and says so; a server that says nothing for longer
    // than that is wedged (stopped by its child, say) and is ended whole by the caller.
    Result request(const ToolFolder& folder, std::chrono::milliseconds limit)
    {
        Result r;
        const std::string line = folder.requestFile().string() + '\t' + folder.outDir().string() + '\t'
            + folder.stderrFile().string() + '\t' + std::to_string(std::max<long long>(1, limit.count())) + '\n';
        std::string reply;
        if (!writeAll(m_in, line) || !readLine(reply, Clock::now() + kReplyLimit) || reply.rfind("started ", 0) != 0)
            return r;
        if (!readLine(reply, Clock::now() + limit + kReplyLimit) || reply.rfind("ended ", 0) != 0)
            return r;
        r.outcome = reply.find(" timeout") != std::string::npos ? Outcome::TimedOut : Outcome::Ended;
        r.status = std::atoi(reply.c_str() + 6);
        if (const auto strays = reply.find(" strays="); strays != std::string::npos)
            r.strays = std::atoi(reply.c_str() + strays + 8);
        return r;
    }

    void stop()
    {
        if (m_in >= 0)
            close(m_in); // end of input: the server returns
        m_in = -1;
        if (m_pid > 0) {
            const auto until = Clock::now() + std::chrono::seconds(2);
            int status = 0;
            while (waitpid(m_pid, &status, WNOHANG) == 0) {
                if (Clock::now() > until) {
                    if (m_sandboxPid > 0)
                        kill(m_sandboxPid, SIGKILL); // the sandbox's first process: all of it ends
                    kill(-m_pid, SIGKILL);
                    waitpid(m_pid, &status, 0);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
        m_pid = -1;
        m_sandboxPid = -1;
        if (m_out >= 0)
            close(m_out);
        m_out = -1;
        if (!m_spool.empty()) {
            std::error_code ignored;
            std::filesystem::remove_all(m_spool, ignored);
            m_spool.clear();
        }
    }

    // Ends the server now, sandbox and all: a server that stopped answering.
    void kill9()
    {
        if (m_sandboxPid > 0)
            kill(m_sandboxPid, SIGKILL);
        if (m_pid > 0)
            kill(-m_pid, SIGKILL);
        stop();
    }

    // What a request left in the spool besides its own folder (removed by the folder itself).
    void emptySpool() const
    {
        std::error_code ignored;
        if (m_spool.empty())
            return;
        for (const auto& entry : std::filesystem::directory_iterator(m_spool, ignored))
            std::filesystem::remove_all(entry.path(), ignored);
    }

private:
    bool makeSpool()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "kl-spool-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            return false;
        m_spool = pattern;
        return true;
    }

    // bubblewrap's {"child-pid": N} on its info descriptor; -1 when it wrote none.
    static pid_t readSandboxPid(int fd)
    {
        std::string text;
        const auto deadline = Clock::now() + kReadyLimit;
        while (text.find('}') == std::string::npos && Clock::now() < deadline) {
            pollfd p { fd, POLLIN, 0 };
            if (poll(&p, 1, 1000) <= 0)
                continue;
            char chunk[256];
            const ssize_t n = read(fd, chunk, sizeof chunk);
            if (n <= 0)
                break;
            text.append(chunk, std::size_t(n));
        }
        const auto key = text.find("\"child-pid\"");
        if (key == std::string::npos)
            return -1;
        const auto colon = text.find(':', key);
        return colon == std::string::npos ? -1 : pid_t(std::atoi(text.c_str() + colon + 1));
    }

    // One protocol line, waiting until `deadline`; false on timeout or end of output (m_eof).
    bool readLine(std::string& line, Clock::time_point deadline)
    {
        while (true) {
            if (const auto nl = m_buffer.find('\n'); nl != std::string::npos) {
                line = m_buffer.substr(0, nl);
                m_buffer.erase(0, nl + 1);
                return true;
            }
            if (m_eof || m_out < 0)
                return false;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0)
                return false;
            pollfd p { m_out, POLLIN, 0 };
            const int ready = poll(&p, 1, int(std::min<long long>(left, 1000)));
            if (ready < 0 && errno != EINTR)
                return false;
            if (ready <= 0)
                continue;
            char chunk[512];
            const ssize_t n = read(m_out, chunk, sizeof chunk);
            if (n > 0)
                m_buffer.append(chunk, std::size_t(n));
            else if (n == 0 || errno != EINTR)
                m_eof = true;
        }
    }

    pid_t m_pid = -1;
    pid_t m_sandboxPid = -1; // the sandbox's first process (bubblewrap's pid 1), as this program sees it
    std::filesystem::path m_spool; // sandboxed: the one folder it may write, where requests' folders go
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
    bool m_eof = false;
};

WarmPythonTool::WarmPythonTool(std::string python, std::filesystem::path script, int maxServers, ConfinementMode mode)
    : m_python(std::move(python))
    , m_script(std::move(script))
    , m_maxServers(std::max(1, maxServers))
    , m_mode(mode)
{
}

WarmPythonTool::~WarmPythonTool()
{
    for (auto& starter : m_starters) // a start in progress finishes (or fails) before the pool goes
        starter.join();
}

int WarmPythonTool::serversStarted() const
{
    std::lock_guard lock(m_mutex);
    return m_started;
}

int WarmPythonTool::coldFallbacks() const
{
    std::lock_guard lock(m_mutex);
    return m_cold;
}

// A request takes an idle server, else waits for the first of: a busy one finishing, or one more
// starting in the background. A start costs about 10 s (the imports), a compile about one: a request
// that waited for its own server's start would make the pool's growth the price of every burst of
// compiles (measured on the H200: 10 s compiles whenever the compile-ahead threads asked at once).
std::unique_ptr<WarmPythonTool::Server> WarmPythonTool::acquire()
{
    std::unique_lock lock(m_mutex);
    while (true) {
        if (!m_idle.empty()) {
            auto server = std::move(m_idle.back());
            m_idle.pop_back();
            return server;
        }
        if (m_startFailed && m_live == 0)
            return nullptr; // the interpreter or the helper cannot serve: every request runs cold
        if (!m_startFailed && m_starting == 0 && m_live < m_maxServers)
            grow();
        m_freed.wait(lock);
    }
}

void WarmPythonTool::grow()
{
    ++m_live;
    ++m_starting;
    m_starters.emplace_back([this] {
        auto server = std::make_unique<Server>();
        const bool ready = server->start(m_python, m_script, m_mode);
        std::lock_guard lock(m_mutex);
        --m_starting;
        if (ready) {
            ++m_started;
            m_idle.push_back(std::move(server));
        } else {
            --m_live;
            m_startFailed = true; // no more starts; those running still serve
        }
        m_freed.notify_all();
    });
}

void WarmPythonTool::release(std::unique_ptr<Server> server)
{
    std::lock_guard lock(m_mutex);
    if (server)
        m_idle.push_back(std::move(server));
    else
        --m_live;
    m_freed.notify_all();
}

PythonToolRun WarmPythonTool::run(const std::string& request, std::chrono::milliseconds limit)
{
    const auto started = Clock::now();
    auto server = acquire();
    auto cold = [&] {
        {
            std::lock_guard lock(m_mutex);
            ++m_cold;
        }
        return runPythonTool(m_python, m_script, request, limit, m_mode);
    };
    if (!server)
        return cold();
    PythonToolRun run;
    Server::Result result;
    {
        const ToolFolder folder(request, server->spool());
        if (!folder.valid()) {
            release(std::move(server));
            run.stderrText = folder.error();
            return run;
        }
        result = server->request(folder, limit);
        if (result.outcome != Server::Outcome::Died)
            folder.collect(run);
    }
    if (result.outcome == Server::Outcome::Died) {
        server->kill9(); // its child and whatever that started end with it (the sandbox, or their death signal)
        server.reset();
        release(nullptr);
        return cold();
    }
    server->emptySpool();
    release(std::move(server));
    run.started = true;
    run.timedOut = result.outcome == Server::Outcome::TimedOut;
    run.exitStatus = result.status;
    run.strays = result.strays;
    run.millis = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    return run;
}

} // namespace kl
