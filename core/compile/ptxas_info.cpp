// Reads the resource report ptxas prints with -v. The lines look like this (NVRTC indents the
// properties line with "ptxas         ."; nvcc prints it bare; older ptxas adds "cmem[N]"):
//
//   ptxas info    : Compiling entry function '_Z4walkPfi' for 'sm_90'
//   ptxas info    : Function properties for _Z4walkPfi
//   ptxas         .     64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 24 registers, used 0 barriers, 64 bytes cumulative stack size, 4096 bytes smem, 360 bytes
//   cmem[0]
//
// "Function properties" also appear for non-inlined device functions; only entries are kept.
#include "core/compile/compiler.h"

#include <regex>
#include <sstream>

namespace kl {

namespace {

std::int64_t number(const std::ssub_match& m) { return std::stoll(m.str()); }

// "Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 4096 bytes smem, 360 bytes cmem[0]"
void readUsage(const std::string& line, KernelResources& k)
{
    static const std::regex registers(R"(Used (\d+) registers)");
    static const std::regex barriers(R"(used (\d+) barriers)");
    static const std::regex cumulative(R"((\d+) bytes cumulative stack size)");
    static const std::regex smem(R"((\d+) bytes smem)");
    static const std::regex cmem(R"((\d+) bytes cmem\[\d+\])");
    std::smatch m;
    if (std::regex_search(line, m, registers))
        k.registers = static_cast<int>(number(m[1]));
    if (std::regex_search(line, m, barriers))
        k.barriers = static_cast<int>(number(m[1]));
    if (std::regex_search(line, m, cumulative))
        k.cumulativeStackBytes = number(m[1]);
    if (std::regex_search(line, m, smem))
        k.staticSharedBytes = number(m[1]);
    k.constantBytes = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), cmem); it != std::sregex_iterator(); ++it)
        k.constantBytes += number((*it)[1]);
}

} // namespace

std::vector<KernelResources> parsePtxasInfo(const std::string& log)
{
    static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
    static const std::regex properties(R"(Function properties for (\S+))");
    static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");

    // nvcc with several -gencode targets reports the same entry once per architecture.
    std::vector<KernelResources> kernels;
    KernelResources* current = nullptr; // the entry being reported (reset after every push_back)
    std::string propertiesOf; // the function the next stack-frame line describes
    std::istringstream in(log);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, entry)) {
            KernelResources k;
            k.name = k.loweredName = m[1];
            k.arch = m[2];
            kernels.push_back(std::move(k));
            current = &kernels.back();
        } else if (std::regex_search(line, m, properties)) {
            propertiesOf = m[1];
        } else if (std::regex_search(line, m, frame)) {
            // Properties of a device function are printed outside any entry: not a kernel's.
            if (current && current->loweredName == propertiesOf) {
                current->stackFrameBytes = number(m[1]);
                current->spillStoreBytes = number(m[2]);
                current->spillLoadBytes = number(m[3]);
            }
            propertiesOf.clear();
        } else if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos) {
            if (current)
                readUsage(line, *current);
        }
    }
    return kernels;
}

} // namespace kl
