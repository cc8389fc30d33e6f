// kernelloop-runner: the only process that touches a GPU. JSON lines on stdin and stdout
// (docs/runner-protocol.md); free text on stderr.
#include "runner/session.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>

namespace {

void usage()
{
    std::fprintf(stderr,
        "usage: kernelloop-runner [--device N] [--python-worker]\n"
        "  Speaks runner protocol v1 on stdin/stdout. KL_CUDA_DRIVER overrides the driver library\n"
        "  (libcuda.so.1); KL_RUNNER_KERNEL_TIMEOUT_MS the wall-clock guard per launch sequence.\n"
        "  --python-worker starts the PyTorch reference worker with the runner (a problem with a PyTorch\n"
        "  reference: its start overlaps the client's compile of the baseline).\n");
}

} // namespace

int main(int argc, char** argv)
{
    int device = 0;
    bool pythonWorker = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--device" || arg == "-d") && i + 1 < argc) {
            char* end = nullptr;
            device = static_cast<int>(std::strtol(argv[++i], &end, 10));
            if (!end || *end != '\0') {
                usage();
                return 2;
            }
        } else if (arg == "--python-worker") {
            pythonWorker = true;
        } else if (arg == "--help" || arg == "-h") {
            usage();
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    std::signal(SIGPIPE, SIG_IGN);

    // The protocol gets its own copy of stdout; file descriptor 1 then points at stderr, so that
    // anything a library prints cannot corrupt the JSON lines.
    const int protocolFd = dup(STDOUT_FILENO);
    std::FILE* protocolOut = protocolFd >= 0 ? fdopen(protocolFd, "w") : nullptr;
    if (!protocolOut) {
        std::perror("kernelloop-runner: dup(stdout)");
        return 1;
    }
    std::fflush(stdout);
    dup2(STDERR_FILENO, STDOUT_FILENO);

    const char* driver = std::getenv("KL_CUDA_DRIVER");
    kl::runner::Session session(device, protocolOut, driver ? driver : "", pythonWorker);
    const int status = session.run(std::cin);
    std::fflush(protocolOut);
    std::fflush(stderr);
    // Skip static destructors: the driver and CUPTI tear themselves down at process exit.
    _exit(status);
}
