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

    bool start(const std::string& python, const std::filesystem::path& script)
    {
        int toServer[2], fromServer[2];
        if (pipe2(toServer, O_CLOEXEC) != 0)
            return false;
        if (pipe2(fromServer, O_CLOEXEC) != 0) {
            close(toServer[0]);
            close(toServer[1]);
            return false;
        }
        const std::string scriptText = script.string();
        m_pid = fork();
        if (m_pid == 0) {
            // Only async-signal-safe calls until exec: the parent may be multithreaded. No parent-death
            // signal: Linux sends it when the forking *thread* ends (a compile-ahead thread does); the
            // server ends instead at the end of its input, when this program closes the pipe or dies.
            dup2(toServer[0], 0);
            dup2(fromServer[1], 1);
            const int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 2); // the server's own noise; each request's stderr has its own file
            const char* argv[] = { python.c_str(), scriptText.c_str(), "--serve", nullptr };
            execvp(argv[0], const_cast<char* const*>(argv));
            _exit(127);
        }
        close(toServer[0]);
        close(fromServer[1]);
        m_in = toServer[1];
        m_out = fromServer[0];
        if (m_pid < 0) {
            stop();
            return false;
        }
        std::string line;
        return readLine(line, Clock::now() + kReadyLimit) && line == "ready";
    }

    enum class Outcome { Ended, TimedOut, Died };
    struct Result {
        Outcome outcome = Outcome::Died;
        int status = -1;
        pid_t child = -1; // the request's process, once the server named it
    };

    Result request(const ToolFolder& folder, std::chrono::milliseconds limit)
    {
        Result r;
        const std::string line = folder.requestFile().string() + '\t' + folder.outDir().string() + '\t'
            + folder.stderrFile().string() + '\n';
        std::string reply;
        if (!writeAll(m_in, line) || !readLine(reply, Clock::now() + kReplyLimit) || reply.rfind("started ", 0) != 0)
            return r;
        const pid_t child = pid_t(std::atoi(reply.c_str() + 8));
        r.child = child;
        const bool ended = readLine(reply, Clock::now() + limit);
        if (!ended && m_eof)
            return r;
        if (!ended) {
            r.outcome = Outcome::TimedOut;
            if (child > 0) {
                kill(-child, SIGKILL); // the child and what it started (ptxas)
                kill(child, SIGKILL);
            }
            if (!readLine(reply, Clock::now() + kReplyLimit)) {
                r.outcome = Outcome::Died;
                return r;
            }
        }
        if (reply.rfind("ended ", 0) != 0) {
            r.outcome = Outcome::Died;
            return r;
        }
        if (r.outcome != Outcome::TimedOut)
            r.outcome = Outcome::Ended;
        r.status = std::atoi(reply.c_str() + 6);
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
                    kill(m_pid, SIGKILL);
                    waitpid(m_pid, &status, 0);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
        m_pid = -1;
        if (m_out >= 0)
            close(m_out);
        m_out = -1;
    }

private:
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
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
    bool m_eof = false;
};

WarmPythonTool::WarmPythonTool(std::string python, std::filesystem::path script, int maxServers)
    : m_python(std::move(python))
    , m_script(std::move(script))
    , m_maxServers(std::max(1, maxServers))
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
        const bool ready = server->start(m_python, m_script);
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
        return runPythonTool(m_python, m_script, request, limit);
    };
    if (!server)
        return cold();
    PythonToolRun run;
    const ToolFolder folder(request);
    if (!folder.valid()) {
        release(std::move(server));
        run.stderrText = folder.error();
        return run;
    }
    const auto result = server->request(folder, limit);
    if (result.outcome == Server::Outcome::Died) {
        if (result.child > 0) { // an orphan now, in its own process group: end it and what it started
            kill(-result.child, SIGKILL);
            kill(result.child, SIGKILL);
        }
        server.reset();
        release(nullptr);
        return cold();
    }
    release(std::move(server));
    run.started = true;
    run.timedOut = result.outcome == Server::Outcome::TimedOut;
    run.exitStatus = result.status;
    folder.collect(run);
    run.millis = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    return run;
}

} // namespace kl
