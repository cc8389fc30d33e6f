#include "core/runnerclient/runner_client.h"

#include "core/runnerclient/shell_words.h"

#include "core/model/error.h"
#include "core/runnerclient/runner_process.h"

#include <sys/wait.h>

#include <csignal>

namespace kl {

namespace {

using protocol::Category;
using Clock = std::chrono::steady_clock;

std::string millis(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

// The last lines of stderr, for a person reading why a runner died.
std::string stderrSection(const std::string& tail)
{
    constexpr std::size_t kShown = 2048;
    if (tail.empty())
        return "; stderr was empty";
    std::string shown = tail.size() > kShown ? tail.substr(tail.size() - kShown) : tail;
    if (tail.size() > kShown)
        if (const auto nl = shown.find('\n'); nl != std::string::npos && nl + 1 < shown.size())
            shown.erase(0, nl + 1);
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r'))
        shown.pop_back();
    return "; stderr ends:\n" + shown;
}

std::string shortened(const std::string& text, std::size_t limit = 120)
{
    return text.size() <= limit ? text : text.substr(0, limit) + "…";
}

} // namespace

RunnerClient::RunnerClient(RunnerConfig config)
    : m_config(std::move(config))
{
}

RunnerClient::~RunnerClient()
{
    try {
        shutdown();
    } catch (...) {
        // A destructor must not throw; the process is killed below either way.
    }
    std::lock_guard lock(m_mutex);
    m_process.reset();
}

bool RunnerClient::running() const
{
    std::lock_guard lock(m_mutex);
    return m_process && !m_process->exited();
}

pid_t RunnerClient::pid() const
{
    std::lock_guard lock(m_mutex);
    return m_process && !m_process->exited() ? m_process->pid() : -1;
}

std::string RunnerClient::stderrTail() const
{
    std::lock_guard lock(m_mutex);
    return m_process ? m_process->stderrTail() : m_lastStderr;
}

std::string RunnerClient::nextId() { return std::to_string(m_nextId++); }

std::optional<std::string> RunnerClient::startOnce()
{
    std::vector<std::string> args { "--device", std::to_string(m_config.deviceIndex) };
    args.insert(args.end(), m_config.extraArgs.begin(), m_config.extraArgs.end());
    std::string program = m_config.path.string();
    if (!m_config.launcher.empty()) {
        std::vector<std::string> through(m_config.launcher.begin() + 1, m_config.launcher.end());
        if (m_config.remoteShell) {
            std::string line = shellQuoted(program);
            for (const auto& a : args)
                line += " " + shellQuoted(a);
            through.push_back(line + "; exit $?");
        } else {
            through.push_back(program);
            through.insert(through.end(), args.begin(), args.end());
        }
        program = m_config.launcher.front();
        args = std::move(through);
    }
    try {
        m_process = RunnerProcess::spawn(program, args);
    } catch (const Error& e) {
        m_startFailure = StartFailure::Spawn;
        return e.message();
    }
    ++m_starts;
    m_startFailure = StartFailure::NoHello;
    const auto giveUp = [&](const std::string& why) {
        m_process->kill();
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
        return why + stderrSection(m_lastStderr);
    };

    std::string line;
    switch (m_process->readLine(line, Clock::now() + m_config.startTimeout)) {
    case RunnerProcess::Outcome::Done:
        break;
    case RunnerProcess::Outcome::Timeout:
        return giveUp("the runner wrote no hello within " + millis(m_config.startTimeout));
    case RunnerProcess::Outcome::TooLong:
        return giveUp("the runner's first line is not a hello (too long)");
    default: {
        const auto status = m_process->waitExit(Clock::now() + m_config.shutdownTimeout);
        return giveUp("the runner " + (status ? describeWaitStatus(*status) : std::string("closed its output"))
            + " before its hello");
    }
    }
    try {
        m_hello = protocol::parseMessage<protocol::Hello>(line);
    } catch (const Error& e) {
        // A hello of another protocol version still says "hello": the runner is there, but too old or new.
        const auto peek = nlohmann::json::parse(line, nullptr, false);
        if (peek.is_object() && peek.value("type", "") == protocol::Hello::kType)
            m_startFailure = StartFailure::VersionMismatch;
        return giveUp("the runner's first line is not a protocol v" + std::to_string(protocol::kProtocolVersion)
            + " hello (" + e.what() + "): \"" + shortened(line) + "\"");
    }
    return std::nullopt;
}

std::optional<std::string> RunnerClient::ensureStarted()
{
    if (m_process && !m_process->exited())
        return std::nullopt;
    if (m_process) { // it exited since the last job (e.g. after a lost CUDA context)
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
    }
    m_hello.reset();
    std::string why;
    const int attempts = std::max(1, m_config.startAttempts);
    for (int attempt = 0; attempt < attempts; ++attempt) {
        const auto failure = startOnce();
        if (!failure) {
            m_startFailure = StartFailure::None;
            return std::nullopt;
        }
        why = *failure;
    }
    return "cannot start " + m_config.path.string() + " (" + std::to_string(attempts)
        + (attempts == 1 ? " attempt" : " attempts") + "): " + why;
}

protocol::Hello RunnerClient::start()
{
    std::lock_guard lock(m_mutex);
    if (const auto why = ensureStarted())
        throw Error("runner.runner-lost", m_config.path.string(), "", *why);
    return *m_hello;
}

bool RunnerDeath::fromOutside() const
{
    return signal == SIGKILL || signal == SIGTERM || signal == SIGINT || signal == SIGHUP || signal == SIGQUIT;
}

RunnerClient::Failure RunnerClient::diedDuringJob(const std::string& what)
{
    const auto partial = m_process->pendingBytes();
    const auto status = m_process->waitExit(Clock::now() + std::chrono::milliseconds(1000));
    std::string how = status ? describeWaitStatus(*status) : "closed its output and was killed";
    m_process->kill();
    m_lastStderr = m_process->stderrTail();
    m_process.reset();
    RunnerDeath death;
    if (status && WIFSIGNALED(*status))
        death.signal = WTERMSIG(*status);
    else if (status && WIFEXITED(*status))
        death.exitStatus = WEXITSTATUS(*status);
    death.phase = m_lastPhase;
    m_lastDeath = death;
    std::string detail = "the runner " + std::string(how.rfind("killed", 0) == 0 ? "was " : "") + how + " " + what
        + (m_lastProgress.empty() ? std::string(" (before any progress)") : " (in phase " + m_lastProgress + ")");
    if (partial > 0)
        detail += ", after writing part of a line (" + std::to_string(partial) + " bytes)";
    return Failure { Category::Crash, detail + stderrSection(m_lastStderr) };
}

bool RunnerClient::leftAfterLastAnswer()
{
    const auto status = m_process->waitExit(Clock::now() + std::chrono::milliseconds(1000));
    return status && WIFEXITED(*status) && WEXITSTATUS(*status) == protocol::kExitContextLost;
}

void RunnerClient::kill()
{
    std::lock_guard lock(m_mutex);
    if (!m_process)
        return;
    m_process->kill();
    m_lastStderr = m_process->stderrTail();
    m_process.reset();
}

std::variant<nlohmann::json, RunnerClient::Failure> RunnerClient::exchange(
    const std::string& id, const std::string& line, std::chrono::milliseconds timeout, const JobOptions& options)
{
    using Outcome = RunnerProcess::Outcome;
    m_lastProgress.clear();
    m_lastPhase.clear();
    m_lastDeath.reset();
    const auto killed = [&](Category category, const std::string& detail) {
        m_process->kill();
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
        return Failure { category, detail };
    };
    const auto cancelled = [&] {
        return killed(
            Category::Cancelled, "cancelled by the caller; the runner was killed and restarts for the next job");
    };

    // A runner that died between jobs is only found out when the request cannot be written, or, when
    // it left on purpose right after answering the last job (a lost CUDA context: it answers, then
    // exits with protocol::kExitContextLost) and the pipe still took this request, when its output
    // closes before any word on this job: either way one fresh runner gets the request.
    Deadline deadline = Clock::now() + timeout;
    for (bool resent = false;; resent = true) {
        for (int attempt = 0;; ++attempt) {
            if (options.cancel && options.cancel->load())
                return Failure { Category::Cancelled, "cancelled by the caller before the job started" };
            if (const auto why = ensureStarted())
                return Failure { Category::RunnerLost, *why };
            if (attempt == 0)
                deadline = Clock::now() + timeout; // the start is not part of the job's time
            const auto sent = m_process->send(line, deadline, options.cancel);
            if (sent == Outcome::Done)
                break;
            if (sent == Outcome::Timeout)
                return killed(Category::Timeout, "the runner did not read the request within " + millis(timeout));
            if (sent == Outcome::Cancelled)
                return cancelled();
            if (attempt > 0 || m_process->pendingBytes() > 0)
                return diedDuringJob("before reading the whole request");
            m_process->kill();
            m_lastStderr = m_process->stderrTail();
            m_process.reset();
        }

        while (m_process) { // reset when it left before reading this request: sent again
            std::string text;
            switch (m_process->readLine(text, deadline, options.cancel)) {
            case Outcome::Done:
                break;
            case Outcome::Closed:
                if (resent || !m_lastProgress.empty() || m_process->pendingBytes() > 0 || !leftAfterLastAnswer())
                    return diedDuringJob("during the job");
                m_lastStderr = m_process->stderrTail();
                m_process.reset();
                break;
            case Outcome::Timeout:
                return killed(Category::Timeout,
                    "no result within " + millis(timeout)
                        + (m_lastProgress.empty() ? "" : " (last progress: " + m_lastProgress + ")")
                        + "; the runner was killed and restarts for the next job");
            case Outcome::Cancelled:
                return cancelled();
            case Outcome::TooLong:
                return killed(Category::BadMessage,
                    "the runner wrote a line over " + std::to_string(RunnerProcess::kMaxLineBytes >> 20) + " MiB");
            }
            if (!m_process)
                break;
            nlohmann::json message;
            try {
                message = protocol::parseLine(text);
            } catch (const Error& e) {
                return killed(
                    Category::BadMessage, std::string("the runner wrote a line that is not protocol v1: ") + e.what());
            }
            const auto type = message.at("type").get<std::string>();
            const auto idIt = message.find("id");
            const std::string lineId = idIt != message.end() && idIt->is_string() ? idIt->get<std::string>() : "";
            if (type == protocol::Progress::kType) {
                if (lineId != id)
                    continue;
                try {
                    const auto progress = message.get<protocol::Progress>();
                    m_lastPhase = progress.phase;
                    m_lastProgress
                        = progress.phase + " " + std::to_string(progress.done) + "/" + std::to_string(progress.total);
                    if (options.progress)
                        options.progress(progress);
                } catch (const Error& e) {
                    return killed(Category::BadMessage, std::string("malformed progress line: ") + e.what());
                }
                continue;
            }
            if (type == "result") {
                // An empty id answers a request the runner could not even read the id of (bad-request).
                if (!lineId.empty() && lineId != id)
                    return killed(Category::BadMessage,
                        "the runner answered request \"" + lineId + "\" while \"" + id + "\" was waiting");
                return message;
            }
            if (type == protocol::Hello::kType)
                return killed(Category::BadMessage, "the runner said hello again in the middle of a job");
            // Other types are from a later minor revision: ignored.
        }
    }
}

protocol::EvaluateResult RunnerClient::evaluate(const protocol::EvaluateRequest& request, const JobOptions& options)
{
    std::lock_guard lock(m_mutex);
    const auto id = request.id.empty() ? nextId() : request.id;
    std::string line;
    if (request.id.empty()) {
        auto copy = request;
        copy.id = id;
        line = protocol::toLine(copy);
    } else {
        line = protocol::toLine(request);
    }

    auto answer = exchange(id, line, options.timeout.value_or(m_config.defaultJobTimeout), options);
    if (auto* failure = std::get_if<Failure>(&answer))
        return protocol::EvaluateResult::failure(id, failure->category, failure->detail);

    protocol::EvaluateResult result;
    try {
        result = std::get<nlohmann::json>(answer).get<protocol::EvaluateResult>();
    } catch (const Error& e) {
        m_process->kill();
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
        return protocol::EvaluateResult::failure(
            id, Category::BadMessage, std::string("the runner's result is not protocol v1: ") + e.what());
    }
    if (result.header.id.empty())
        result.header.id = id;
    // The runner ends itself after losing its CUDA context; let it go now rather than find out
    // when the next request cannot be written.
    if (result.category() == Category::IllegalAddress || result.category() == Category::Trap) {
        m_process->closeInput();
        if (!m_process->waitExit(Clock::now() + m_config.shutdownTimeout))
            m_process->kill();
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
    }
    return result;
}

protocol::DeviceDescription RunnerClient::describe()
{
    std::lock_guard lock(m_mutex);
    const auto id = nextId();
    const auto fail = [&](Category category, const std::string& detail) -> Error {
        return Error("runner." + std::string(protocol::categoryName(category)), m_config.path.string(), "", detail);
    };
    auto answer = exchange(id, protocol::toLine(protocol::DescribeRequest { id }), m_config.describeTimeout, {});
    if (auto* failure = std::get_if<Failure>(&answer))
        throw fail(failure->category, failure->detail);
    protocol::DescribeResult result;
    try {
        result = std::get<nlohmann::json>(answer).get<protocol::DescribeResult>();
    } catch (const Error& e) {
        m_process->kill();
        m_lastStderr = m_process->stderrTail();
        m_process.reset();
        throw fail(Category::BadMessage, std::string("the runner's describe result is not protocol v1: ") + e.what());
    }
    if (result.header.status != protocol::Status::Ok || !result.device) {
        auto detail = result.header.detail;
        if (detail.empty() && m_hello)
            detail = m_hello->detail;
        throw fail(result.header.category.value_or(Category::BadRequest), detail);
    }
    return *result.device;
}

void RunnerClient::shutdown()
{
    std::lock_guard lock(m_mutex);
    if (!m_process)
        return;
    const auto deadline = Clock::now() + m_config.shutdownTimeout;
    if (!m_process->exited()) {
        const auto id = nextId();
        if (m_process->send(protocol::toLine(protocol::ShutdownRequest { id }), deadline)
            == RunnerProcess::Outcome::Done) {
            // Read until its acknowledgement (or anything else ends the wait).
            std::string text;
            while (m_process->readLine(text, deadline) == RunnerProcess::Outcome::Done)
                if (protocol::peekId(text) == id)
                    break;
        }
        m_process->closeInput(); // same effect as shutdown for a runner that missed the request
        if (!m_process->waitExit(deadline))
            m_process->kill();
    }
    m_lastStderr = m_process->stderrTail();
    m_process.reset();
    m_hello.reset();
}

} // namespace kl
