// Prints NVRTC's program log for one source, for refreshing the golden logs in
// tests/fixtures/compile/logs (see capture.sh there). Not a test: it records what NVRTC says.
//   capture_nvrtc_log FILE [--name KERNEL]... [NVRTC OPTION]...
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: capture_nvrtc_log FILE [--name KERNEL]... [OPTION]...\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    std::string name = argv[1];
    name = name.substr(name.find_last_of('/') + 1);

    std::vector<std::string> kernels;
    std::vector<const char*> options;
    for (int i = 2; i < argc; ++i) {
        if (std::string(argv[i]) == "--name" && i + 1 < argc)
            kernels.emplace_back(argv[++i]);
        else
            options.push_back(argv[i]);
    }
    nvrtcProgram program = nullptr;
    nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    for (const auto& k : kernels)
        nvrtcAddNameExpression(program, k.c_str());
    const nvrtcResult rc = nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    std::fputs(log.c_str(), stdout);
    std::fprintf(stderr, "%s: %s\n", name.c_str(), nvrtcGetErrorString(rc));
    nvrtcDestroyProgram(&program);
    return 0;
}
