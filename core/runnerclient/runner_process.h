#pragma once
// A child process spoken to in lines: stdin a Unix socket (so writes to a dead child fail with
// EPIPE instead of raising SIGPIPE in the caller), stdout and stderr pipes, all read with poll()
// under a deadline and an optional cancel flag. The child leads its own process group, so kill()
// takes its children with it; the destructor always kills and reaps: no zombies.
// POSIX only; one owning thread.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

using Deadline = std::chrono::steady_clock::time_point;

class RunnerProcess {
public:
    // Starts `path` with `args` (argv[1..]). Throws kl::Error("runner.spawn") when it cannot be started.
    static std::unique_ptr<RunnerProcess> spawn(const std::string& path, const std::vector<std::string>& args);
    ~RunnerProcess();
    RunnerProcess(const RunnerProcess&) = delete;
    RunnerProcess& operator=(const RunnerProcess&) = delete;

    enum class Outcome {
        Done, // sent everything / read a line
        Closed, // the child closed stdin (send) or stdout (read): it is probably dying
        Timeout, // the deadline passed
        Cancelled, // *cancel became true
        TooLong, // a line longer than kMaxLineBytes
    };
    static constexpr std::size_t kMaxLineBytes = std::size_t(256) << 20;
    static constexpr std::size_t kStderrTailBytes = 16 * 1024;

    // Writes all of `data`, reading stdout and stderr meanwhile so that neither side blocks.
    Outcome send(std::string_view data, Deadline deadline, const std::atomic<bool>* cancel = nullptr);
    // The next complete stdout line, without its newline.
    Outcome readLine(std::string& line, Deadline deadline, const std::atomic<bool>* cancel = nullptr);
    // Bytes of stdout received after the last complete line (a partial line).
    std::size_t pendingBytes() const { return m_output.size(); }

    void closeInput();
    // Waits for the child to exit on its own (reading stderr meanwhile) and reaps it.
    // Returns the wait status, or nullopt if it is still running at the deadline.
    std::optional<int> waitExit(Deadline deadline);
    // SIGKILL to the whole process group, then reaps the child. Idempotent.
    void kill();
    // True once the child exited (checked without blocking; reaps it if so).
    bool exited();

    pid_t pid() const { return m_pid; }
    std::optional<int> waitStatus() const { return m_waitStatus; }
    std::string stderrTail() const { return m_stderrTail; }

private:
    RunnerProcess() = default;
    // One poll() round over the open descriptors, sending from `write` if given. nullopt when
    // something happened (or nothing yet), else why the caller must stop waiting.
    std::optional<Outcome> pollOnce(std::string_view* write, Deadline deadline, const std::atomic<bool>* cancel);
    void readOutput();
    void readErrors();
    // Reaps the child if it has exited (or waits for it with `block`); its group is killed first.
    bool reap(bool block);
    bool reaped() const { return m_waitStatus.has_value(); }

    pid_t m_pid = -1;
    int m_inFd = -1; // our end of the child's stdin socket
    int m_outFd = -1; // child's stdout
    int m_errFd = -1; // child's stderr
    int m_pidFd = -1; // readable when the child exits (-1 where the kernel lacks pidfd_open)
    std::string m_output; // stdout not yet returned as lines
    std::size_t m_scanned = 0; // bytes of m_output known to hold no newline
    std::string m_stderrTail;
    bool m_inBroken = false;
    std::optional<int> m_waitStatus;
};

// "exited with status 3", "killed by signal 11 (SIGSEGV)".
std::string describeWaitStatus(int status);

} // namespace kl
