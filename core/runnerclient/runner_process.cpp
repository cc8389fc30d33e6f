#include "core/runnerclient/runner_process.h"

#include "core/model/child_environment.h"

#include "core/model/error.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>

extern char** environ;

namespace kl {

namespace {

std::string errnoText(int error) { return std::strerror(error); }

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

void setNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int pidfdOpen(pid_t pid)
{
#ifdef SYS_pidfd_open
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
        return static_cast<int>(fd);
    }
#else
    (void)pid;
#endif
    return -1;
}

// Milliseconds to wait in one poll(): until the deadline, and in short slices while a cancel
// flag must be watched (the flag cannot wake poll() itself).
int pollTimeout(Deadline deadline, bool watchCancel)
{
    using namespace std::chrono;
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count() + 1;
    const long long cap = watchCancel ? 20 : 1000 * 60 * 60;
    return static_cast<int>(std::clamp<long long>(left, 0, cap));
}

struct SpawnResources {
    posix_spawn_file_actions_t actions {};
    posix_spawnattr_t attr {};
    SpawnResources()
    {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
    }
    ~SpawnResources()
    {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
};

} // namespace

std::unique_ptr<RunnerProcess> RunnerProcess::spawn(const std::string& path, const std::vector<std::string>& args)
{
    int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
    const auto fail = [&](const std::string& what, int error) -> std::unique_ptr<RunnerProcess> {
        for (int* fd : { &in[0], &in[1], &out[0], &out[1], &err[0], &err[1] })
            closeFd(*fd);
        throw Error("runner.spawn", path, "", "cannot start the runner: " + what + ": " + errnoText(error));
    };
    // posix_spawn reports a missing executable only where it uses vfork/clone; elsewhere (and under
    // valgrind) the child just exits 127. Ask first, for a clear reason.
    if (::access(path.c_str(), X_OK) != 0)
        return fail(path, errno);
    // Close-on-exec everywhere, so that runners started by other threads do not inherit these.
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
        return fail("socketpair", errno);
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        return fail("pipe", errno);

    SpawnResources r;
    posix_spawn_file_actions_adddup2(&r.actions, in[1], 0);
    posix_spawn_file_actions_adddup2(&r.actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&r.actions, err[1], 2);
    // Its own process group (kill takes its children too), no inherited blocked or ignored signals.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setpgroup(&r.attr, 0);
    posix_spawnattr_setsigmask(&r.attr, &none);
    posix_spawnattr_setsigdefault(&r.attr, &all);
    posix_spawnattr_setflags(&r.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<std::string> argvStrings { path };
    argvStrings.insert(argvStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argvStrings)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    // No secret of ours reaches the runner (nor the reference worker it starts, nor a remote host).
    std::vector<std::string> envStrings = childEnvironment();
    const std::vector<char*> envp = environmentPointers(envStrings);
    pid_t pid = -1;
    if (const int error = ::posix_spawn(&pid, path.c_str(), &r.actions, &r.attr, argv.data(), envp.data()); error != 0)
        return fail("posix_spawn", error);

    std::unique_ptr<RunnerProcess> p(new RunnerProcess);
    p->m_pid = pid;
    p->m_inFd = in[0];
    p->m_outFd = out[0];
    p->m_errFd = err[0];
    closeFd(in[1]);
    closeFd(out[1]);
    closeFd(err[1]);
    for (int fd : { p->m_inFd, p->m_outFd, p->m_errFd })
        setNonBlocking(fd);
    p->m_pidFd = pidfdOpen(pid);
    return p;
}

RunnerProcess::~RunnerProcess()
{
    kill();
    for (int* fd : { &m_inFd, &m_outFd, &m_errFd, &m_pidFd })
        closeFd(*fd);
}

void RunnerProcess::readOutput()
{
    std::array<char, 65536> buffer;
    for (;;) {
        const ssize_t n = ::read(m_outFd, buffer.data(), buffer.size());
        if (n > 0) {
            m_output.append(buffer.data(), static_cast<std::size_t>(n));
            if (m_output.size() > kMaxLineBytes)
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            closeFd(m_outFd);
        return;
    }
}

void RunnerProcess::readErrors()
{
    std::array<char, 65536> buffer;
    for (;;) {
        const ssize_t n = ::read(m_errFd, buffer.data(), buffer.size());
        if (n > 0) {
            m_stderrTail.append(buffer.data(), static_cast<std::size_t>(n));
            if (m_stderrTail.size() > 2 * kStderrTailBytes)
                m_stderrTail.erase(0, m_stderrTail.size() - kStderrTailBytes);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            closeFd(m_errFd);
        break;
    }
    if (m_stderrTail.size() > kStderrTailBytes)
        m_stderrTail.erase(0, m_stderrTail.size() - kStderrTailBytes);
}

std::optional<RunnerProcess::Outcome> RunnerProcess::pollOnce(
    std::string_view* write, Deadline deadline, const std::atomic<bool>* cancel)
{
    if (cancel && cancel->load())
        return Outcome::Cancelled;
    if (std::chrono::steady_clock::now() >= deadline)
        return Outcome::Timeout;

    std::array<pollfd, 3> fds {};
    nfds_t n = 0;
    const auto add = [&](int fd, short events) {
        if (fd >= 0)
            fds[n++] = pollfd { fd, events, 0 };
    };
    if (write && !m_inBroken)
        add(m_inFd, POLLOUT);
    add(m_outFd, POLLIN);
    add(m_errFd, POLLIN);
    if (n == 0)
        return Outcome::Closed;
    const int ready = ::poll(fds.data(), n, pollTimeout(deadline, cancel != nullptr));
    if (ready < 0 && errno != EINTR)
        return Outcome::Closed;
    if (ready <= 0)
        return std::nullopt;

    for (nfds_t i = 0; i < n; ++i) {
        const auto& p = fds[i];
        if (p.revents == 0)
            continue;
        if (p.fd == m_inFd) {
            if (p.revents & (POLLERR | POLLHUP)) {
                m_inBroken = true;
                continue;
            }
            const ssize_t sent = ::send(m_inFd, write->data(), write->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent > 0)
                write->remove_prefix(static_cast<std::size_t>(sent));
            else if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                m_inBroken = true; // EPIPE, ECONNRESET: the child is gone or closed its stdin
        } else if (p.fd == m_outFd) {
            readOutput();
        } else if (p.fd == m_errFd) {
            readErrors();
        }
    }
    return std::nullopt;
}

RunnerProcess::Outcome RunnerProcess::send(std::string_view data, Deadline deadline, const std::atomic<bool>* cancel)
{
    while (!data.empty()) {
        if (m_inBroken || m_inFd < 0)
            return Outcome::Closed;
        if (const auto o = pollOnce(&data, deadline, cancel)) {
            if (*o == Outcome::Closed)
                m_inBroken = true;
            return *o;
        }
    }
    return Outcome::Done;
}

RunnerProcess::Outcome RunnerProcess::readLine(std::string& line, Deadline deadline, const std::atomic<bool>* cancel)
{
    for (;;) {
        const auto newline = m_output.find('\n', m_scanned);
        if (newline != std::string::npos) {
            line.assign(m_output, 0, newline);
            m_output.erase(0, newline + 1);
            m_scanned = 0;
            return Outcome::Done;
        }
        m_scanned = m_output.size();
        if (m_output.size() > kMaxLineBytes)
            return Outcome::TooLong;
        if (m_outFd < 0)
            return Outcome::Closed;
        if (const auto o = pollOnce(nullptr, deadline, cancel))
            return *o;
    }
}

void RunnerProcess::closeInput()
{
    closeFd(m_inFd);
    m_inBroken = true;
}

bool RunnerProcess::reap(bool block)
{
    if (reaped() || m_pid <= 0)
        return true;
    // Look without reaping: while the child is a zombie its pid (and group id) cannot be reused,
    // so the group can be killed safely before the child is collected.
    siginfo_t info {};
    int r;
    do
        r = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        m_waitStatus = -1; // ECHILD: someone else collected it (SIGCHLD ignored by the application)
        return true;
    }
    if (info.si_pid != m_pid)
        return false;
    ::kill(-m_pid, SIGKILL); // whatever it left running in its group
    int status = 0;
    pid_t w;
    do
        w = ::waitpid(m_pid, &status, 0);
    while (w < 0 && errno == EINTR);
    m_waitStatus = w == m_pid ? status : -1;
    return true;
}

bool RunnerProcess::exited() { return reap(false); }

std::optional<int> RunnerProcess::waitExit(Deadline deadline)
{
    while (!reap(false)) {
        if (std::chrono::steady_clock::now() >= deadline)
            return std::nullopt;
        // Wake when the child exits (pidfd) or writes; without pidfd, in short slices.
        std::array<pollfd, 3> fds {};
        nfds_t n = 0;
        for (int fd : { m_pidFd, m_outFd, m_errFd })
            if (fd >= 0)
                fds[n++] = pollfd { fd, POLLIN, 0 };
        const int timeout = m_pidFd >= 0 ? pollTimeout(deadline, false) : std::min(pollTimeout(deadline, false), 10);
        if (::poll(fds.data(), n, timeout) > 0) {
            for (nfds_t i = 0; i < n; ++i) {
                if (fds[i].revents == 0)
                    continue;
                if (fds[i].fd == m_outFd)
                    readOutput();
                else if (fds[i].fd == m_errFd)
                    readErrors();
            }
        }
    }
    if (m_errFd >= 0)
        readErrors(); // what it wrote just before dying
    return m_waitStatus;
}

void RunnerProcess::kill()
{
    if (m_pid <= 0 || reaped())
        return;
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL); // in case it left its group
    reap(true);
    if (m_errFd >= 0)
        readErrors();
}

std::string describeWaitStatus(int status)
{
    if (status < 0)
        return "exit status unknown";
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        std::string text = "killed by signal " + std::to_string(sig);
        if (const char* abbrev = ::sigabbrev_np(sig))
            text += " (SIG" + std::string(abbrev) + ")";
        if (WCOREDUMP(status))
            text += ", core dumped";
        return text;
    }
    return "stopped (wait status " + std::to_string(status) + ")";
}

} // namespace kl
