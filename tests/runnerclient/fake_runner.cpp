// A stand-in for kernelloop-runner at the process boundary, for testing the runner client without
// a GPU. It speaks protocol v1 through the real message code. How it misbehaves:
//   at start, by --mode: normal | no-hello | exit-before-hello | bad-hello | exit-after-hello |
//                        ignore-shutdown | no-device
//   per evaluate request, by the label of its first case:
//     hang          one progress line, then never answers
//     grandchild    starts a child that holds stdout (its pid on stderr), then never answers
//     crash         a CUDA-like message on stderr, then SIGSEGV
//     partial       part of a line on stdout, then exit 3
//     garbage       a line that is not JSON, then waits
//     wrong-id      a result for another request
//     bad-result    a result line with a malformed timing section
//     flood         4 MiB on stderr, then a normal answer
//     context-lost  an illegal-address result, then exit 1 (as the real runner after a lost context)
//     environment   a result whose detail lists the names of its environment's variables
//     anything else three progress lines and a passed result whose detail echoes the request
#include "core/model/error.h"
#include "core/protocol/messages.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <thread>

extern char** environ;

using namespace kl;
using namespace kl::protocol;

namespace {

void send(const std::string& line) { std::cout << line << std::flush; }

[[noreturn]] void waitForever()
{
    for (;;)
        ::pause();
}

DeviceDescription fakeDevice(int index)
{
    DeviceDescription d;
    d.index = index;
    d.name = "Fake GPU";
    d.computeCapability = "9.0";
    d.smCount = 132;
    d.l2Bytes = 62914560;
    d.copyBandwidthGbps = 4000.0;
    d.copyBandwidthBytes = 1 << 30;
    return d;
}

void evaluate(const EvaluateRequest& request, int device)
{
    const auto& behaviour = request.cases.front().label;
    if (behaviour == "hang") {
        send(toLine(Progress { request.id, "verify", 1, 4 }));
        waitForever();
    }
    if (behaviour == "grandchild") {
        const pid_t child = ::fork();
        if (child == 0)
            waitForever(); // holds stdout and stderr open
        std::cerr << "grandchild " << child << std::endl;
        send(toLine(Progress { request.id, "verify", 1, 4 }));
        waitForever();
    }
    if (behaviour == "crash") {
        std::cerr << "fake runner: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700)" << std::endl;
        const rlimit noCore { 0, 0 };
        ::setrlimit(RLIMIT_CORE, &noCore);
        std::raise(SIGSEGV);
    }
    if (behaviour == "partial") {
        std::cout << R"({"v":1,"id":")" << request.id << std::flush;
        ::_exit(3);
    }
    if (behaviour == "garbage") {
        send("Segmentation fault? no: just not JSON\n");
        return;
    }
    if (behaviour == "wrong-id") {
        send(toLine(EvaluateResult::failure(request.id + "-other", Category::WrongResult, "not yours")));
        return;
    }
    if (behaviour == "bad-result") {
        auto j = nlohmann::json(EvaluateResult::failure(request.id, Category::Passed, ""));
        j["timing"] = { { "cases", { { { "label", "x" }, { "candidate", { { "p20_us", 1.0 } } } } } } };
        send(j.dump() + "\n");
        return;
    }
    if (behaviour == "flood") {
        const std::string chunk(4096, 'e');
        for (int i = 0; i < 1024; ++i)
            std::cerr << chunk << '\n';
        std::cerr << "end of flood" << std::endl;
    }
    if (behaviour == "context-lost-then-linger") {
        // As the real runner after a lost context: answer, then exit 3 without reading the next
        // request; the pause makes sure the client's next request is already in the pipe.
        send(toLine(EvaluateResult::failure(request.id, Category::Timeout, "still running after 3000 ms")));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::_exit(3);
    }
    if (behaviour == "environment") { // the names of its environment, for the test that no secret reaches it
        std::string names;
        for (char** entry = environ; entry && *entry; ++entry)
            names += std::string(*entry).substr(0, std::string(*entry).find('=')) + ",";
        send(toLine(EvaluateResult::failure(request.id, Category::Passed, names)));
        return;
    }
    if (behaviour == "context-lost") {
        send(toLine(EvaluateResult::failure(request.id, Category::IllegalAddress, "an illegal memory access")));
        ::_exit(1);
    }
    for (int i = 1; i <= 3; ++i)
        send(toLine(Progress { request.id, "verify", i, 3 }));
    auto result = EvaluateResult::failure(request.id, Category::Passed,
        "cases=" + std::to_string(request.cases.size())
            + " candidate_cubin_bytes=" + std::to_string(request.modules.candidate.cubin.size()));
    result.device = fakeDevice(device);
    result.verification = Verification { true, {} };
    send(toLine(result));
}

} // namespace

int main(int argc, char** argv)
{
    std::string mode = "normal";
    int device = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--mode") == 0)
            mode = argv[i + 1];
        else if (std::strcmp(argv[i], "--device") == 0)
            device = std::atoi(argv[i + 1]);
    }

    if (mode == "exit-before-hello") {
        std::cerr << "fake runner: cannot open /dev/nvidia0" << std::endl;
        return 7;
    }
    if (mode == "no-hello") {
        std::cerr << "fake runner: stuck before hello" << std::endl;
        waitForever();
    }
    if (mode == "bad-hello") {
        send(R"({"v":1,"event":"hello","status":"no-device","detail":"runner not implemented yet"})"
             "\n");
        return 0;
    }
    Hello hello;
    hello.runner = "fake";
    hello.pid = ::getpid();
    hello.deviceOk = mode != "no-device";
    hello.detail = hello.deviceOk ? "" : "libcuda.so.1: cannot open shared object file";
    hello.deviceIndex = device;
    send(toLine(hello));
    if (mode == "exit-after-hello")
        return 0;

    std::string line;
    while (std::getline(std::cin, line)) {
        Request request;
        try {
            request = parseRequest(line);
        } catch (const Error& e) {
            send(toLine(EvaluateResult::failure(peekId(line).value_or(""), Category::BadRequest, e.what())));
            continue;
        }
        if (const auto* d = std::get_if<DescribeRequest>(&request)) {
            if (mode == "no-device")
                send(toLine(
                    DescribeResult { ResultHeader { d->id, Status::Error, Category::NoDevice, hello.detail }, {} }));
            else
                send(toLine(
                    DescribeResult { ResultHeader { d->id, Status::Ok, std::nullopt, {} }, fakeDevice(device) }));
        } else if (const auto* s = std::get_if<ShutdownRequest>(&request)) {
            if (mode == "ignore-shutdown")
                continue;
            send(toLine(ShutdownResult { ResultHeader { s->id, Status::Ok, std::nullopt, {} } }));
            return 0;
        } else {
            const auto& e = std::get<EvaluateRequest>(request);
            if (mode == "no-device")
                send(toLine(EvaluateResult::failure(e.id, Category::NoDevice, hello.detail)));
            else
                evaluate(e, device);
        }
    }
    if (mode == "ignore-shutdown")
        waitForever(); // not even a closed stdin makes it go
    return 0;
}
