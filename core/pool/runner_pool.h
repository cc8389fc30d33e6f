#pragma once
// A pool of runners, one per GPU endpoint (local, ssh, Slurm), each owned by its own worker thread:
// jobs are queued and each idle runner takes the next one, so the k candidates of a round spread
// over the pool while one timing job runs per GPU at a time. Every device of the pool is one GPU
// model: runners of another model are set aside (a comparison never mixes two models), and each
// job times its baseline beside the candidate, so a speedup is always against the same GPU, same job.
//
// Faults of a runner, rather than of the candidate, are categorised (runner.lost: the runner or its
// connection died from outside — kill -9, a dropped host, a cancelled Slurm job; runner.unreachable:
// it cannot be (re)started; runner.version-mismatch: it speaks another protocol; runner.hang: no word
// from it before the job's deadline). Such a job is requeued once on another runner; an endpoint
// with `quarantineAfter` faults in a row is quarantined (never the last usable one), and the session
// goes on with the rest. No Qt.
#include "core/pool/runner_endpoint.h"
#include "core/pool/slurm_allocation.h"
#include "core/protocol/messages.h"
#include "core/runnerclient/runner_client.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kl::pool {

enum class RunnerState { Starting, Idle, Busy, NoDevice, OtherModel, Quarantined, Stopped };
const char* runnerStateName(RunnerState state); // "starting", "idle", "busy", "no-device", ...

// What a pool status panel shows, one row per endpoint.
struct RunnerStatus {
    std::string endpoint;
    std::string device; // "NVIDIA H200 #0"; empty until described
    RunnerState state = RunnerState::Starting;
    int jobsDone = 0;
    int faults = 0;
    std::string lastError; // "[runner.lost] ..."
};

struct PoolOptions {
    EndpointOptions endpoints;
    int quarantineAfter = 2; // faults in a row
    std::chrono::milliseconds allocationWait { 60'000 }; // for salloc's grant
};

struct PooledResult {
    protocol::EvaluateResult result;
    std::string fault; // the runner's fault category when the job could not be done; empty: the runner's verdict
    std::string endpoint; // the endpoint that answered (or was tried last)
    int attempts = 0; // runners the job was given to
};

class RunnerPool {
public:
    RunnerPool(std::vector<Endpoint> endpoints, PoolOptions options);
    // A pool of one runner the caller owns (the loop's single-runner form); `endpoint` names it.
    explicit RunnerPool(RunnerClient& runner, std::string endpoint = "local:0", int quarantineAfter = 2);
    ~RunnerPool(); // stop()
    RunnerPool(const RunnerPool&) = delete;
    RunnerPool& operator=(const RunnerPool&) = delete;

    // Starts every runner (in parallel), describes its device and keeps the runners of one GPU model
    // (the most common; ties: the first endpoint's). Returns that model's description (of the first
    // such runner). Throws "runner.no-device" when no runner has a GPU, "runner.unreachable" (or a
    // single runner's own error) when none can be started. Idempotent.
    protocol::DeviceDescription start();

    // Queues one evaluation; the future is always fulfilled (failures are results). `options.cancel`
    // is watched while the job waits and runs; `options.progress` runs on the runner's worker thread.
    std::future<PooledResult> submit(protocol::EvaluateRequest request, JobOptions options = {});

    std::vector<RunnerStatus> status() const;
    std::vector<std::string> endpoints() const; // as configured, in order
    int usableRunners() const; // started, of the session's model, not quarantined

    // Cancels running jobs, fails queued ones as cancelled, shuts the runners down and releases the
    // Slurm allocations. Idempotent.
    void stop();

private:
    struct Slot;
    struct Job;
    void startSlot(Slot& slot);
    void work(Slot& slot);
    bool eligible(const Job& job, const Slot& slot) const; // with m_mutex held
    void relayCancels();
    void runJob(Slot& slot, std::shared_ptr<Job> job);

    PoolOptions m_options;
    std::vector<std::unique_ptr<Slot>> m_slots;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Job>> m_queue;
    bool m_started = false;
    bool m_stopping = false;
    protocol::DeviceDescription m_device;
    std::thread m_relay;
};

} // namespace kl::pool
