#include "runner/session.h"

#include "core/model/error.h"
#include "runner/cuda_driver.h"
#include "runner/device.h"
#include "runner/evaluator.h"
#include "runner/job_failure.h"

#include <chrono>
#include <iostream>
#include <unistd.h>

namespace kl::runner {

using protocol::Category;

Session::Session(int deviceIndex, std::FILE* out, const std::string& driverPath, bool pythonWorker)
    : m_out(out)
    , m_deviceIndex(deviceIndex)
{
    std::string whyNot;
    m_driver = CudaDriver::load(whyNot, driverPath);
    if (m_driver)
        m_device = Device::open(*m_driver, deviceIndex, whyNot);
    if (m_device) {
        try {
            m_evaluator = std::make_unique<Evaluator>(*m_device);
            if (pythonWorker)
                m_evaluator->startPythonWorker();
        } catch (const std::exception& error) {
            whyNot = error.what();
            m_device.reset();
        }
    }
    if (!m_device)
        m_noDevice = whyNot.empty() ? "no CUDA device" : whyNot;
}

Session::~Session() = default;

template <class Message> void Session::send(const Message& message)
{
    const std::string line = protocol::toLine(message);
    if (std::fwrite(line.data(), 1, line.size(), m_out) != line.size() || std::fflush(m_out) != 0) {
        // The client is gone: nobody to answer.
        m_finished = true;
    }
}

int Session::run(std::istream& in)
{
    protocol::Hello hello;
    hello.runner = kRunnerVersion;
    hello.pid = static_cast<std::int64_t>(getpid());
    hello.deviceOk = m_device != nullptr;
    hello.detail = m_noDevice;
    hello.deviceIndex = m_deviceIndex;
    send(hello);

    std::string line;
    while (!m_finished && std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        answer(line);
    }
    return m_exitStatus;
}

void Session::answer(const std::string& line)
{
    const auto received = std::chrono::steady_clock::now();
    protocol::Request request;
    try {
        request = protocol::parseRequest(line);
    } catch (const kl::Error& error) {
        std::string detail = error.message();
        if (!error.where().empty())
            detail = error.where() + ": " + detail;
        send(protocol::EvaluateResult::failure(protocol::peekId(line).value_or(""), Category::BadRequest, detail));
        return;
    }

    if (const auto* shutdown = std::get_if<protocol::ShutdownRequest>(&request)) {
        protocol::ShutdownResult result;
        result.header.id = shutdown->id;
        result.header.status = protocol::Status::Ok;
        send(result);
        m_finished = true;
        return;
    }

    if (const auto* describe = std::get_if<protocol::DescribeRequest>(&request)) {
        protocol::DescribeResult result;
        result.header.id = describe->id;
        if (!m_device) {
            result.header.status = protocol::Status::Error;
            result.header.category = Category::NoDevice;
            result.header.detail = m_noDevice;
        } else {
            try {
                result.device = m_evaluator->description();
                result.header.status = protocol::Status::Ok;
            } catch (const JobFailure& failure) {
                result.header.status = protocol::statusOf(failure.category());
                result.header.category = failure.category();
                result.header.detail = failure.what();
            }
        }
        send(result);
        return;
    }

    const auto& evaluate = std::get<protocol::EvaluateRequest>(request);
    if (!m_device) {
        send(protocol::EvaluateResult::failure(evaluate.id, Category::NoDevice, m_noDevice));
        return;
    }
    auto lastProgress = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    auto progress = [&](const char* phase, int done, int total) {
        const auto now = std::chrono::steady_clock::now();
        if (now - lastProgress < std::chrono::milliseconds(200) && done != total)
            return;
        lastProgress = now;
        protocol::Progress message;
        message.id = evaluate.id;
        message.phase = phase;
        message.done = done;
        message.total = total;
        send(message);
    };
    const double parseMs
        = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - received).count();
    Evaluator::Outcome outcome = m_evaluator->evaluate(evaluate, progress);
    outcome.result.phasesMs["parse"] = parseMs; // the request line decoded (base64 cubins included)
    send(outcome.result);
    if (outcome.contextLost) {
        // Every later driver call would fail, and a kernel may still be running: leave without
        // running destructors (which would wait on it). The client starts a fresh runner.
        std::fflush(m_out);
        std::fflush(stderr);
        _exit(kExitContextLost);
    }
}

} // namespace kl::runner
