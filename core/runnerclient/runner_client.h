#pragma once
// The core's side of a runner process (docs/runner-protocol.md): starts kernelloop-runner for one
// GPU, sends describe/evaluate/shutdown as JSON lines, and turns every way a runner can misbehave
// into a categorised result rather than an exception or a hang:
//   no answer before the job's deadline → timeout (the process group is killed)
//   the runner dies mid-job             → crash (with the signal or exit status and stderr's tail)
//   a line that is not protocol v1      → bad-message (killed)
//   the caller sets the cancel flag     → cancelled (killed within ~20 ms)
//   it cannot be (re)started / no hello → runner-lost
// The next job after any of these starts a fresh runner. No Qt, POSIX only.
//
// Threads: a client is owned by one thread, which makes every call; calls are serialised, one job
// at a time. Only the cancel flag of JobOptions may be set from another thread. The progress
// callback runs on the owning thread, inside evaluate(). SIGPIPE never reaches the caller (stdin is
// a socket written with MSG_NOSIGNAL), and every runner started is reaped (no zombies).
#include "core/protocol/messages.h"

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kl {

class RunnerProcess;

struct RunnerConfig {
    std::filesystem::path path; // the runner executable
    int deviceIndex = 0; // passed as --device N
    std::chrono::milliseconds startTimeout { 10'000 }; // from start to the hello line
    std::chrono::milliseconds defaultJobTimeout { 120'000 }; // evaluate, when JobOptions gives none
    std::chrono::milliseconds describeTimeout { 60'000 }; // the first describe measures copy bandwidth
    std::chrono::milliseconds shutdownTimeout { 2'000 }; // then it is killed
    std::vector<std::string> extraArgs; // after --device N
    // A command the runner is started through (an absolute program path first), e.g. ssh with its options
    // and host, or srun with its job: the runner's own command line follows it, as one shell-quoted word
    // ending in "; exit $?" when remoteShell (ssh hands a remote shell one line; the explicit exit keeps a
    // signal's death visible as status 128+N instead of ssh's 255). Empty: the runner is started directly.
    std::vector<std::string> launcher;
    bool remoteShell = false;
    int startAttempts = 2; // spawns tried before runner-lost
};

// How a runner died during the last job (a crash result says it in words too).
struct RunnerDeath {
    int signal = 0; // 0 when it exited by itself
    int exitStatus = -1; // when it exited
    std::string phase; // the job's last progress phase ("verify", "time", "profile"), empty before any
    // SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT come from outside the runner (a user, the OOM
    // killer, a scheduler), not from the kernel it was running; SIGSEGV, SIGBUS, SIGABRT ... do.
    bool fromOutside() const;
};

// Why the last start failed (runner-lost results and start()'s error say it in words).
enum class StartFailure {
    None,
    Spawn, // the program (runner or launcher) could not be executed
    NoHello, // it started but exited, hung or wrote something else before a hello
    VersionMismatch, // it said hello in another protocol version
};

struct JobOptions {
    std::optional<std::chrono::milliseconds> timeout; // wall clock for the whole job (start excluded)
    std::function<void(const protocol::Progress&)> progress;
    const std::atomic<bool>* cancel = nullptr; // may be set from any thread
};

class RunnerClient {
public:
    explicit RunnerClient(RunnerConfig config);
    ~RunnerClient(); // shuts the runner down politely, killing it if it does not go
    RunnerClient(const RunnerClient&) = delete;
    RunnerClient& operator=(const RunnerClient&) = delete;

    // Starts the runner (if not running) and returns its hello; a no-device hello is a success.
    // Throws kl::Error("runner.runner-lost") with the reason when it cannot be started.
    protocol::Hello start();

    // The device. Throws kl::Error("runner.<category>"), e.g. "runner.no-device" with the runner's
    // detail, "runner.timeout", "runner.crash", "runner.runner-lost", "runner.bad-message".
    protocol::DeviceDescription describe();

    // Runs one evaluation. Never throws for the runner's failures: they come back as results
    // with status and category set (timeout, crash, bad-message, cancelled, runner-lost, ...).
    // An empty request id is replaced by the client's own.
    protocol::EvaluateResult evaluate(const protocol::EvaluateRequest& request, const JobOptions& options = {});

    // Asks the runner to exit; kills it after shutdownTimeout. Idempotent.
    void shutdown();
    // SIGKILL to the runner's process group, and reaps it. Idempotent.
    void kill();

    bool running() const;
    pid_t pid() const; // -1 when not running
    const std::optional<protocol::Hello>& hello() const { return m_hello; }
    std::string stderrTail() const; // of the current or last runner
    int starts() const { return m_starts; } // runners started so far (restarts show here)
    // Set when the runner died during the last evaluate or describe; reset by the next one.
    const std::optional<RunnerDeath>& lastDeath() const { return m_lastDeath; }
    const RunnerConfig& config() const { return m_config; }
    StartFailure lastStartFailure() const { return m_startFailure; }

private:
    struct Failure {
        protocol::Category category;
        std::string detail;
    };
    // Sends one request line and waits for the result line with its id. On failure the runner is
    // killed (except runner-lost, where none runs) and the failure says why.
    std::variant<nlohmann::json, Failure> exchange(
        const std::string& id, const std::string& line, std::chrono::milliseconds timeout, const JobOptions& options);
    std::optional<std::string> ensureStarted(); // nullopt when running, else why it cannot be started
    std::optional<std::string> startOnce();
    bool leftAfterLastAnswer(); // the runner exited with protocol::kExitContextLost
    Failure diedDuringJob(const std::string& what);
    std::string nextId();

    RunnerConfig m_config;
    std::unique_ptr<RunnerProcess> m_process;
    std::optional<protocol::Hello> m_hello;
    std::string m_lastStderr;
    std::string m_lastProgress;
    std::string m_lastPhase;
    std::optional<RunnerDeath> m_lastDeath;
    int m_starts = 0;
    StartFailure m_startFailure = StartFailure::None;
    std::uint64_t m_nextId = 1;
    mutable std::mutex m_mutex;
};

} // namespace kl
