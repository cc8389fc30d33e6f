#include "core/pool/runner_pool.h"

#include "core/model/error.h"
#include "core/pool/pool_trace.h"
#include "core/pool/runner_fault.h"

#include <algorithm>
#include <map>
#include <set>

namespace kl::pool {

namespace {
// A runner that takes jobs now or will after the one it runs.
bool usable(const RunnerStatus& status)
{
    return status.state == RunnerState::Idle || status.state == RunnerState::Busy;
}
} // namespace

const char* runnerStateName(RunnerState state)
{
    switch (state) {
    case RunnerState::Starting:
        return "starting";
    case RunnerState::Idle:
        return "idle";
    case RunnerState::Busy:
        return "busy";
    case RunnerState::NoDevice:
        return "no-device";
    case RunnerState::OtherModel:
        return "other-model";
    case RunnerState::Quarantined:
        return "quarantined";
    case RunnerState::Stopped:
        return "stopped";
    }
    return "?";
}

struct RunnerPool::Slot {
    Endpoint endpoint;
    std::string name; // endpoint text
    std::unique_ptr<RunnerClient> own;
    RunnerClient* client = nullptr;
    std::unique_ptr<SlurmAllocation> allocation;
    RunnerStatus status;
    std::optional<protocol::DeviceDescription> device;
    std::optional<Error> startError; // of a single-runner pool, rethrown as it was
    int faultsInRow = 0;
    std::atomic<bool> cancelNow { false }; // the running job's cancel flag (set by the relay)
    const std::atomic<bool>* callerCancel = nullptr; // the running job's caller's flag
    std::thread worker;
};

struct RunnerPool::Job {
    protocol::EvaluateRequest request;
    JobOptions options;
    std::promise<PooledResult> promise;
    std::set<const Slot*> excluded; // runners it failed on
    std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();
    std::string firstNote; // why it was requeued
    int attempts = 0;
};

RunnerPool::RunnerPool(std::vector<Endpoint> endpoints, PoolOptions options)
    : m_options(std::move(options))
{
    for (auto& e : endpoints) {
        auto slot = std::make_unique<Slot>();
        slot->endpoint = std::move(e);
        slot->name = slot->endpoint.text();
        slot->status.endpoint = slot->name;
        m_slots.push_back(std::move(slot));
    }
}

RunnerPool::RunnerPool(RunnerClient& runner, std::string endpoint, int quarantineAfter)
{
    m_options.quarantineAfter = quarantineAfter;
    auto slot = std::make_unique<Slot>();
    slot->name = endpoint;
    slot->status.endpoint = endpoint;
    slot->client = &runner;
    m_slots.push_back(std::move(slot));
}

RunnerPool::~RunnerPool() { stop(); }

std::vector<std::string> RunnerPool::endpoints() const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out;
    for (const auto& s : m_slots)
        out.push_back(s->name);
    return out;
}

std::vector<RunnerStatus> RunnerPool::status() const
{
    std::lock_guard lock(m_mutex);
    std::vector<RunnerStatus> out;
    for (const auto& s : m_slots)
        out.push_back(s->status);
    return out;
}

int RunnerPool::usableRunners() const
{
    std::lock_guard lock(m_mutex);
    return int(std::count_if(m_slots.begin(), m_slots.end(), [](const auto& s) { return usable(s->status); }));
}

// On the starting thread of this slot: allocation, runner, hello, device. Never throws.
void RunnerPool::startSlot(Slot& slot)
{
    const auto failed = [&](const std::string& fault, const Error& e) {
        slot.startError = e;
        std::lock_guard lock(m_mutex);
        slot.status.state = RunnerState::Quarantined;
        slot.status.lastError = "[" + fault + "] " + e.message();
        ++slot.status.faults;
    };
    try {
        if (!slot.client) {
            std::string job;
            if (slot.endpoint.kind == EndpointKind::Slurm) {
                slot.allocation
                    = std::make_unique<SlurmAllocation>(slot.endpoint, m_options.endpoints, m_options.allocationWait);
                job = slot.allocation->jobId();
                std::lock_guard lock(m_mutex);
                // Two Slurm endpoints may read alike; their jobs never do.
                slot.name = slot.endpoint.text() + " [job " + job + "]";
                slot.status.endpoint = slot.name;
            }
            slot.own = std::make_unique<RunnerClient>(runnerConfigFor(slot.endpoint, m_options.endpoints, job));
            slot.client = slot.own.get();
        }
        trace("starting " + slot.name);
        const auto hello = slot.client->start();
        trace("hello from " + slot.name);
        if (!hello.deviceOk) {
            slot.startError = Error("runner.no-device", {}, slot.name, "no GPU: " + hello.detail);
            std::lock_guard lock(m_mutex);
            slot.status.state = RunnerState::NoDevice;
            slot.status.lastError = "[runner.no-device] " + hello.detail;
            return;
        }
        auto device = slot.client->describe();
        trace("described " + slot.name + " (copy bandwidth measured)");
        std::lock_guard lock(m_mutex);
        slot.device = device;
        slot.status.device = device.name + " #" + std::to_string(device.index);
    } catch (const Error& e) {
        const bool runnerCategory = e.category() == "runner.runner-lost" || e.category() == "runner.timeout"
            || e.category() == "runner.crash" || e.category() == "runner.bad-message";
        failed(runnerCategory && slot.client ? startFault(slot.client->lastStartFailure()) : e.category(), e);
    }
}

protocol::DeviceDescription RunnerPool::start()
{
    {
        std::lock_guard lock(m_mutex);
        if (m_started)
            return m_device;
    }
    std::vector<std::thread> starting;
    for (auto& s : m_slots)
        starting.emplace_back([this, slot = s.get()] { startSlot(*slot); });
    for (auto& t : starting)
        t.join();

    std::unique_lock lock(m_mutex);
    // One GPU model for the session: the most common, ties to the earliest endpoint.
    std::map<std::string, int> count;
    for (const auto& s : m_slots)
        if (s->device)
            ++count[s->device->name];
    std::string model;
    int best = 0;
    for (const auto& s : m_slots)
        if (s->device && count[s->device->name] > best) {
            best = count[s->device->name];
            model = s->device->name;
        }
    if (model.empty()) {
        const auto first = m_slots.empty() ? nullptr : m_slots.front().get();
        if (m_slots.size() == 1 && first->startError)
            throw *first->startError;
        for (const auto& s : m_slots)
            if (s->status.state == RunnerState::NoDevice)
                throw Error("runner.no-device", {}, s->name,
                    "no GPU on any runner of the pool; " + s->name + ": " + s->startError->message());
        std::string why;
        for (const auto& s : m_slots)
            why += "\n  " + s->name + ": " + s->status.lastError;
        throw Error("runner.unreachable", {}, {}, "no runner of the pool could be started:" + why);
    }
    for (auto& s : m_slots) {
        if (!s->device)
            continue;
        if (s->device->name != model) {
            s->status.state = RunnerState::OtherModel;
            s->status.lastError = "a " + s->device->name + ", not the session's " + model
                + ": two GPU models are never mixed in one comparison";
            continue;
        }
        if (m_device.name.empty())
            m_device = *s->device;
        s->status.state = RunnerState::Idle;
    }
    m_started = true;
    for (auto& s : m_slots)
        if (s->status.state == RunnerState::Idle)
            s->worker = std::thread([this, slot = s.get()] { work(*slot); });
    m_relay = std::thread([this] { relayCancels(); });
    return m_device;
}

std::future<PooledResult> RunnerPool::submit(protocol::EvaluateRequest request, JobOptions options)
{
    auto job = std::make_shared<Job>();
    job->request = std::move(request);
    job->options = std::move(options);
    auto future = job->promise.get_future();
    std::lock_guard lock(m_mutex);
    if (!m_started || m_stopping) {
        PooledResult r;
        r.result = protocol::EvaluateResult::failure(job->request.id, protocol::Category::Cancelled,
            m_stopping ? "the runner pool is stopping" : "the runner pool was not started");
        job->promise.set_value(std::move(r));
        return future;
    }
    m_queue.push_back(std::move(job));
    m_wake.notify_all();
    return future;
}

bool RunnerPool::eligible(const Job& job, const Slot& slot) const
{
    if (!job.excluded.count(&slot))
        return true;
    // Back on a runner it failed on only when no other usable runner is left.
    return std::none_of(m_slots.begin(), m_slots.end(),
        [&](const auto& s) { return usable(s->status) && !job.excluded.count(s.get()); });
}

void RunnerPool::work(Slot& slot)
{
    for (;;) {
        std::shared_ptr<Job> job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] {
                return m_stopping || slot.status.state == RunnerState::Quarantined
                    || std::any_of(m_queue.begin(), m_queue.end(), [&](const auto& j) { return eligible(*j, slot); });
            });
            if (m_stopping || slot.status.state == RunnerState::Quarantined)
                return;
            const auto it
                = std::find_if(m_queue.begin(), m_queue.end(), [&](const auto& j) { return eligible(*j, slot); });
            job = *it;
            m_queue.erase(it);
            slot.status.state = RunnerState::Busy;
            slot.callerCancel = job->options.cancel;
            slot.cancelNow = job->options.cancel && job->options.cancel->load();
        }
        runJob(slot, std::move(job));
    }
}

namespace {
// What a restart after a fault says (and whether the runner is back).
std::pair<bool, std::string> restart(RunnerClient& client)
{
    try {
        client.start();
        return { true, "the runner was restarted (pid " + std::to_string(client.pid()) + ")" };
    } catch (const Error& e) {
        return { false, "the runner could not be restarted: " + e.message() };
    }
}
} // namespace

void RunnerPool::runJob(Slot& slot, std::shared_ptr<Job> job)
{
    ++job->attempts;
    bool sawProgress = false;
    JobOptions options = job->options;
    options.cancel = &slot.cancelNow;
    options.progress = [&](const protocol::Progress& p) {
        sawProgress = true;
        if (job->options.progress)
            job->options.progress(p);
    };
    const auto started = std::chrono::steady_clock::now();
    trace("job " + job->request.id + " starts on " + slot.name);
    auto result = slot.client->evaluate(job->request, options);
    // What the loop sees around the runner's own phases: waiting in the queue, and the client's wall
    // time (the runner's phases plus the request's and the reply's trip and decoding).
    const auto ended = std::chrono::steady_clock::now();
    result.phasesMs["job_queued"] = std::chrono::duration<double, std::milli>(started - job->submitted).count();
    result.phasesMs["job_wall"] = std::chrono::duration<double, std::milli>(ended - started).count();
    trace("job " + job->request.id + " ends on " + slot.name);
    const auto death = slot.client->lastDeath();
    auto verdict = classifyFault(slot.endpoint.kind, result, death, slot.client->lastStartFailure(), sawProgress);

    PooledResult out;
    out.endpoint = slot.name;
    out.attempts = job->attempts;
    if (!result.device && slot.device)
        result.device = slot.device;

    if (verdict.fault.empty()) {
        if (!verdict.explanation.empty())
            result.header.detail += " (" + verdict.explanation + ")";
        // A candidate that crashed the runner: its verdict says the runner came back.
        if (result.category() == protocol::Category::Crash && death)
            result.header.detail += "; " + restart(*slot.client).second;
        if (!job->firstNote.empty())
            result.header.detail
                += (result.header.detail.empty() ? "" : "; ") + std::string("requeued once: ") + job->firstNote;
        out.result = std::move(result);
        std::lock_guard lock(m_mutex);
        slot.faultsInRow = 0;
        ++slot.status.jobsDone;
        slot.status.state = RunnerState::Idle;
        job->promise.set_value(std::move(out));
        return;
    }

    // The runner's fault: say what happened, bring the runner back if it can be, requeue once.
    std::string detail = result.header.detail;
    if (!verdict.explanation.empty())
        detail += " (" + verdict.explanation + ")";
    int faults = 1;
    if (result.category() != protocol::Category::RunnerLost) {
        const auto [back, text] = restart(*slot.client);
        detail += "; " + text;
        if (!back)
            ++faults; // gone for good: a lost host that also refuses a new connection
    }
    const auto note = detail + " [" + verdict.fault + " on " + slot.name + "]";
    std::lock_guard lock(m_mutex);
    slot.faultsInRow += faults;
    slot.status.faults += faults;
    slot.status.lastError = "[" + verdict.fault + "] " + detail;
    slot.status.state = RunnerState::Idle;
    const auto othersUsable = std::count_if(
        m_slots.begin(), m_slots.end(), [&](const auto& s) { return s.get() != &slot && usable(s->status); });
    if (m_options.quarantineAfter > 0 && slot.faultsInRow >= m_options.quarantineAfter && othersUsable > 0) {
        slot.status.state = RunnerState::Quarantined;
        slot.status.lastError += " (quarantined after " + std::to_string(slot.faultsInRow) + " faults in a row)";
    }
    const bool cancelled = m_stopping || (job->options.cancel && job->options.cancel->load());
    if (job->firstNote.empty() && !cancelled) {
        job->firstNote = note;
        job->excluded.insert(&slot);
        m_queue.push_front(std::move(job));
        m_wake.notify_all();
        return;
    }
    out.fault = verdict.fault;
    out.result = std::move(result);
    out.result.header.detail = note + (job->firstNote.empty() ? "" : "; first: " + job->firstNote);
    job->promise.set_value(std::move(out));
    m_wake.notify_all(); // a quarantine may make jobs eligible elsewhere
}

void RunnerPool::relayCancels()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        for (auto& s : m_slots)
            if (s->status.state == RunnerState::Busy && s->callerCancel && s->callerCancel->load())
                s->cancelNow = true;
        // Jobs still queued when their caller gives up are answered at once.
        for (auto it = m_queue.begin(); it != m_queue.end();) {
            if ((*it)->options.cancel && (*it)->options.cancel->load()) {
                PooledResult r;
                r.result = protocol::EvaluateResult::failure(
                    (*it)->request.id, protocol::Category::Cancelled, "cancelled by the caller before the job started");
                (*it)->promise.set_value(std::move(r));
                it = m_queue.erase(it);
            } else {
                ++it;
            }
        }
        m_wake.wait_for(lock, std::chrono::milliseconds(20));
    }
}

void RunnerPool::stop()
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping)
            return;
        m_stopping = true;
        for (auto& s : m_slots)
            s->cancelNow = true;
        for (auto& job : m_queue) {
            PooledResult r;
            r.result = protocol::EvaluateResult::failure(
                job->request.id, protocol::Category::Cancelled, "the runner pool stopped before the job started");
            job->promise.set_value(std::move(r));
        }
        m_queue.clear();
    }
    m_wake.notify_all();
    for (auto& s : m_slots)
        if (s->worker.joinable())
            s->worker.join();
    if (m_relay.joinable())
        m_relay.join();
    for (auto& s : m_slots) {
        if (s->own)
            s->own->shutdown();
        if (s->allocation)
            s->allocation->release();
        std::lock_guard lock(m_mutex);
        s->status.state = RunnerState::Stopped;
    }
}

} // namespace kl::pool
