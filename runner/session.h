#pragma once
// The runner's conversation with its client (docs/runner-protocol.md): a hello, then one result
// per request line until shutdown or end of input.
#include "core/protocol/messages.h"

#include <cstdio>
#include <istream>
#include <memory>
#include <string>

namespace kl::runner {

class CudaDriver;
class Device;
class Evaluator;

constexpr const char* kRunnerVersion = "0.1.0";
using protocol::kExitContextLost; // the exit status after a job that lost the CUDA context

class Session {
public:
    // `out` receives protocol lines only. `driverPath` empty: libcuda.so.1. `pythonWorker`: start the
    // PyTorch reference worker now, without waiting for it.
    Session(int deviceIndex, std::FILE* out, const std::string& driverPath = {}, bool pythonWorker = false);
    ~Session();

    // Serves requests from `in` until shutdown or end of input; returns the exit status.
    int run(std::istream& in);

private:
    template <class Message> void send(const Message& message);
    void answer(const std::string& line);

    std::FILE* m_out;
    int m_deviceIndex;
    std::string m_noDevice; // why there is no device; empty when there is one
    std::unique_ptr<CudaDriver> m_driver;
    std::unique_ptr<Device> m_device;
    std::unique_ptr<Evaluator> m_evaluator;
    bool m_finished = false;
    int m_exitStatus = 0;
};

} // namespace kl::runner
