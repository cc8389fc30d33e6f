#include "runner/python_worker.h"

#include "core/compile/python_tool.h"
#include "runner/job_failure.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kl::runner {

using protocol::Category;
using Clock = std::chrono::steady_clock;

namespace {

double millisSinceStart(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace

[[noreturn]] void workerFailure(const std::string& detail)
{
    throw JobFailure(Category::BadRequest, "the PyTorch reference worker " + detail);
}

namespace {

void writeAll(int fd, const std::string& text)
{
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            workerFailure(std::string("is gone (writing its request: ") + std::strerror(errno) + ")");
        done += static_cast<std::size_t>(n);
    }
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

} // namespace

PythonWorker::~PythonWorker() { stop(); }

void PythonWorker::start()
{
    launch();
    awaitHello();
}

void PythonWorker::launch()
{
    if (m_pid > 0)
        return;
    const std::string python = pythonExecutable();
    const auto helper = pythonHelperPath("torch_reference_worker.py", "KL_REFERENCE_WORKER");
    if (!std::filesystem::is_regular_file(helper))
        workerFailure("cannot start: " + missingHelperMessage(helper, "KL_REFERENCE_WORKER"));
    const std::string script = helper.string();
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        workerFailure(std::string("cannot start: pipe: ") + std::strerror(errno));
    const std::string cannotRun = "cannot run " + python + ": ";
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        const char* argv[] = { python.c_str(), script.c_str(), nullptr };
        execvp(argv[0], const_cast<char* const*>(argv));
        const char* why = std::strerror(errno);
        if (::write(2, cannotRun.data(), cannotRun.size()) < 0 || ::write(2, why, std::strlen(why)) < 0) { }
        _exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    if (pid < 0) {
        ::close(in[1]);
        ::close(out[0]);
        workerFailure(std::string("cannot start: fork: ") + std::strerror(errno));
    }
    m_pid = pid;
    m_toWorker = in[1];
    m_fromWorker = out[0];
    m_pending.clear();
    signal(SIGPIPE, SIG_IGN); // a dead worker is an error reply, not the runner's death
    m_launched = Clock::now();
    m_helloPending = true;
    m_unanswered = 0;
    writeAll(m_toWorker, "{\"op\":\"hello\"}\n");
}

void PythonWorker::awaitHello()
{
    if (!m_helloPending)
        return;
    m_helloPending = false;
    const auto waiting = Clock::now();
    const std::string python = pythonExecutable();
    const std::string script = pythonHelperPath("torch_reference_worker.py", "KL_REFERENCE_WORKER").string();
    std::string first;
    try {
        first = readLine(std::chrono::seconds(120));
    } catch (const JobFailure& failure) {
        workerFailure("did not start (" + script + " under " + python + "): " + failure.what()
            + " (set KL_PYTHON to a Python with PyTorch)");
    }
    const nlohmann::json hello = nlohmann::json::parse(first, nullptr, false);
    if (hello.is_discarded() || !hello.value("ok", false)) {
        const std::string message = hello.is_object() ? hello.value("message", "") : "";
        stop();
        workerFailure("did not start (" + script + " under " + python + "): "
            + (message.empty() ? std::string("no hello") : message) + " (set KL_PYTHON to a Python with PyTorch)");
    }
    m_hello = hello;
    if (m_startMillis == 0.0) {
        m_startMillis = millisSinceStart(m_launched);
        m_startWaitMillis = millisSinceStart(waiting);
    }
}

void PythonWorker::stop()
{
    if (m_pid <= 0)
        return;
    if (m_toWorker >= 0) {
        const std::string bye = "{\"op\":\"shutdown\"}\n";
        if (::write(m_toWorker, bye.data(), bye.size()) < 0) { }
        ::close(m_toWorker);
    }
    // Give it a moment to leave by itself (CUDA teardown), then end it.
    int status = 0;
    for (int i = 0; i < 200 && waitpid(m_pid, &status, WNOHANG) == 0; ++i)
        usleep(10000);
    if (waitpid(m_pid, &status, WNOHANG) == 0) {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, &status, 0);
    }
    if (m_fromWorker >= 0)
        ::close(m_fromWorker);
    m_helloPending = false;
    m_unanswered = 0;
    m_pid = -1;
    m_toWorker = m_fromWorker = -1;
}

std::string PythonWorker::readLine(std::chrono::milliseconds limit)
{
    const auto deadline = Clock::now() + limit;
    while (true) {
        if (const auto newline = m_pending.find('\n'); newline != std::string::npos) {
            std::string line = m_pending.substr(0, newline);
            m_pending.erase(0, newline + 1);
            return line;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            stop();
            workerFailure("gave no reply within " + std::to_string(limit.count() / 1000) + " s; it was stopped");
        }
        pollfd p { m_fromWorker, POLLIN, 0 };
        const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue;
        char buffer[65536];
        const ssize_t n = ::read(m_fromWorker, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int status = 0;
            waitpid(m_pid, &status, 0);
            m_pid = -1;
            ::close(m_toWorker);
            ::close(m_fromWorker);
            m_toWorker = m_fromWorker = -1;
            workerFailure("ended (status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1)
                + ") before it replied; its messages are on the runner's stderr");
        }
        m_pending.append(buffer, static_cast<std::size_t>(n));
    }
}

void PythonWorker::send(const nlohmann::json& request)
{
    if (m_pid <= 0)
        launch();
    writeAll(m_toWorker, request.dump() + "\n");
    ++m_unanswered;
}

void PythonWorker::settle(std::chrono::milliseconds limit)
{
    if (m_pid <= 0)
        return;
    awaitHello();
    drainSent(limit);
}

std::vector<nlohmann::json> PythonWorker::takeAnswered()
{
    std::vector<nlohmann::json> answered;
    answered.swap(m_answered);
    return answered;
}

void PythonWorker::drainSent(std::chrono::milliseconds limit)
{
    while (m_unanswered > 0) {
        const std::string line = readLine(limit);
        --m_unanswered;
        nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
        m_answered.push_back(reply.is_object() ? reply : nlohmann::json { { "ok", false }, { "message", line } });
    }
}

nlohmann::json PythonWorker::call(const nlohmann::json& request, std::chrono::milliseconds limit)
{
    if (m_pid <= 0)
        launch();
    awaitHello();
    drainSent(limit);
    writeAll(m_toWorker, request.dump() + "\n");
    const std::string line = readLine(limit);
    nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
    if (reply.is_discarded() || !reply.is_object())
        workerFailure("replied with something not JSON: " + line.substr(0, 200));
    return reply;
}

SharedTensors::SharedTensors(const std::vector<Tensor>& tensors)
{
    for (const Tensor& t : tensors) {
        m_regions.push_back({ t, m_bytes });
        m_bytes += aligned(t.layout.bytes());
    }
    static std::atomic<int> counter { 0 };
    m_path = "/dev/shm/kl-reference-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    m_fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (m_fd < 0 || ftruncate(m_fd, static_cast<off_t>(std::max<std::size_t>(m_bytes, 1))) != 0)
        workerFailure("cannot share memory through " + m_path + ": " + std::strerror(errno));
    void* base = mmap(nullptr, std::max<std::size_t>(m_bytes, 1), PROT_READ | PROT_WRITE, MAP_SHARED, m_fd, 0);
    if (base == MAP_FAILED)
        workerFailure("cannot map " + m_path + ": " + std::strerror(errno));
    m_base = static_cast<std::byte*>(base);
}

SharedTensors::~SharedTensors()
{
    if (m_base)
        munmap(m_base, std::max<std::size_t>(m_bytes, 1));
    if (m_fd >= 0)
        ::close(m_fd);
    ::unlink(m_path.c_str());
}

std::size_t SharedTensors::offsetOf(const std::string& name) const
{
    for (const auto& r : m_regions)
        if (r.tensor.name == name)
            return r.offset;
    return 0;
}

nlohmann::json SharedTensors::describeLayouts(
    const std::vector<Tensor>& tensors, const std::map<std::string, std::vector<std::int64_t>>& shapes)
{
    nlohmann::json described = nlohmann::json::array();
    for (const Tensor& t : tensors) {
        const auto& layout = t.layout;
        std::vector<std::int64_t> shape;
        if (const auto it = shapes.find(t.name); it != shapes.end())
            shape = it->second;
        else if (layout.rows == 1)
            shape = { layout.rowLength };
        else
            shape = { layout.rows, layout.rowLength };
        described.push_back({ { "name", t.name }, { "role", t.output ? "output" : "input" },
            { "dtype", dtypeName(layout.type) }, { "shape", shape }, { "row_stride", layout.rowStride } });
    }
    return described;
}

nlohmann::json SharedTensors::describe(const std::map<std::string, std::vector<std::int64_t>>& shapes) const
{
    std::vector<Tensor> tensors;
    for (const auto& r : m_regions)
        tensors.push_back(r.tensor);
    nlohmann::json described = describeLayouts(tensors, shapes);
    for (std::size_t i = 0; i < m_regions.size(); ++i)
        described[i]["offset"] = m_regions[i].offset;
    return described;
}

} // namespace kl::runner
