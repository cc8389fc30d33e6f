#pragma once
// The runner's Python worker (python/kernelloop/torch_reference_worker.py): started once per runner,
// spoken to in JSON lines over a pipe; tensors cross through host shared memory (a file under
// /dev/shm holding each tensor's data region, padding gaps included). No CUDA here: the tests
// drive the real worker with Debian's CPU PyTorch.
#include "core/verify/patterns.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kl::runner {

// Throws JobFailure(bad-request) "the PyTorch reference worker <detail>".
[[noreturn]] void workerFailure(const std::string& detail);

// The worker process. Throws JobFailure(bad-request) when it cannot start, dies, or times out;
// a reference that raises is reported by the reply (ok false), not thrown.
class PythonWorker {
public:
    PythonWorker() = default;
    ~PythonWorker();
    PythonWorker(const PythonWorker&) = delete;
    PythonWorker& operator=(const PythonWorker&) = delete;

    // Starts the worker without waiting for its hello (torch's import, CUDA's start): the runner does
    // other work meanwhile, and the first call waits for what is left. Throws as call() does.
    void launch();
    // Sends one request line and waits for its reply line (starting the worker first if needed).
    nlohmann::json call(const nlohmann::json& request, std::chrono::milliseconds limit);
    // Sends one request line without waiting; its reply is read before the next call's and kept for
    // takeAnswered(). For work the worker can do while the runner does its own (torch.compile's warm-up).
    void send(const nlohmann::json& request);
    // Waits for the hello and the replies to every send() (kept for takeAnswered()).
    void settle(std::chrono::milliseconds limit);
    // Replies to send()s read so far, oldest first, and forgets them.
    std::vector<nlohmann::json> takeAnswered();
    double startMillis() const { return m_startMillis; } // the first start, torch's import included
    // How long the first call waited for the worker's hello: the part of its start nothing overlapped.
    double startWaitMillis() const { return m_startWaitMillis; }
    bool started() const { return m_pid > 0; }
    const nlohmann::json& hello() const { return m_hello; }

private:
    void start();
    void awaitHello();
    void drainSent(std::chrono::milliseconds limit);
    void stop();
    std::string readLine(std::chrono::milliseconds limit);

    pid_t m_pid = -1;
    int m_toWorker = -1;
    int m_fromWorker = -1;
    std::string m_pending;
    bool m_helloPending = false;
    std::chrono::steady_clock::time_point m_launched;
    int m_unanswered = 0; // send()s whose reply is not read yet
    std::vector<nlohmann::json> m_answered;
    double m_startMillis = 0.0;
    double m_startWaitMillis = 0.0;
    nlohmann::json m_hello;
};

// A file in /dev/shm mapped into the runner: each tensor's data region at its offset.
class SharedTensors {
public:
    struct Tensor {
        std::string name;
        bool output = false;
        verify::TensorLayout layout;
    };
    // Throws JobFailure(bad-request) when /dev/shm refuses the file.
    explicit SharedTensors(const std::vector<Tensor>& tensors);
    ~SharedTensors();
    SharedTensors(const SharedTensors&) = delete;
    SharedTensors& operator=(const SharedTensors&) = delete;

    const std::string& path() const { return m_path; }
    std::byte* at(std::size_t offset) const { return m_base + offset; }
    // The request's "tensors": name, role, dtype, shape (from `shapes`, else rows x row length),
    // row_stride, offset.
    nlohmann::json describe(const std::map<std::string, std::vector<std::int64_t>>& shapes) const;
    // The same without a file (no offsets): what torch.compile's warm-up needs.
    static nlohmann::json describeLayouts(
        const std::vector<Tensor>& tensors, const std::map<std::string, std::vector<std::int64_t>>& shapes);
    std::size_t offsetOf(const std::string& name) const;

private:
    struct Region {
        Tensor tensor;
        std::size_t offset = 0;
    };
    std::vector<Region> m_regions;
    std::string m_path;
    std::byte* m_base = nullptr;
    std::size_t m_bytes = 0;
    int m_fd = -1;
};

} // namespace kl::runner
