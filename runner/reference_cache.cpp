#include "runner/reference_cache.h"

#include "core/model/hash.h"

#include <cstdio>
#include <cstdlib>

namespace kl::runner {

namespace {

// Exact: two doubles that print alike are the same double.
std::string exact(double value)
{
    char text[40];
    std::snprintf(text, sizeof text, "%a", value);
    return text;
}

void appendProgram(std::string& key, const protocol::Program& program)
{
    for (const protocol::Scratch& s : program.scratch)
        key += "scratch " + s.name + " " + std::to_string(static_cast<int>(s.dtype)) + " " + std::to_string(s.elements)
            + (s.zeroed ? " zeroed" : "") + "\n";
    for (const protocol::Launch& l : program.launches) {
        key += "launch " + l.kernel;
        for (const std::int64_t g : l.grid)
            key += " " + std::to_string(g);
        key += " /";
        for (const std::int64_t b : l.block)
            key += " " + std::to_string(b);
        key += " smem " + std::to_string(l.sharedBytes) + " args";
        for (const protocol::Arg& arg : l.args) {
            if (const auto* buffer = std::get_if<protocol::BufferArg>(&arg)) {
                key += " @" + buffer->name;
                continue;
            }
            const auto& scalar = std::get<protocol::ScalarArg>(arg);
            key += " " + std::to_string(static_cast<int>(scalar.type)) + ":";
            if (const auto* integer = std::get_if<std::int64_t>(&scalar.value))
                key += std::to_string(*integer);
            else
                key += exact(std::get<double>(scalar.value));
        }
        key += "\n";
    }
}

} // namespace

std::string referenceCacheKey(
    const protocol::EvaluateRequest& request, const protocol::Case& testCase, std::uint64_t seed)
{
    std::string key = "reference-outputs v1\nseed " + std::to_string(seed) + "\n";
    if (request.pythonReference) {
        const protocol::PythonReference& python = *request.pythonReference;
        key += "python " + python.fileName + " " + contentHash(python.source) + " "
            + std::to_string(python.source.size()) + "\n";
        for (const auto& [name, value] : python.scalars)
            key += "scalar " + name + "=" + exact(value) + "\n";
        for (const auto& [name, shape] : testCase.shapes) {
            key += "shape " + name;
            for (const std::int64_t d : shape)
                key += " " + std::to_string(d);
            key += "\n";
        }
    } else {
        const std::string& cubin = request.modules.reference.cubin;
        key += "cubin " + contentHash(cubin) + " " + std::to_string(cubin.size()) + "\n";
    }
    for (const protocol::Buffer& b : testCase.buffers) {
        key += "buffer " + b.name + " " + std::to_string(static_cast<int>(b.role)) + " "
            + std::to_string(static_cast<int>(b.dtype)) + " " + std::to_string(b.rows) + "x"
            + std::to_string(b.rowLength) + "/" + std::to_string(b.rowStride);
        if (b.distribution)
            key += " dist " + std::to_string(static_cast<int>(b.distribution->kind)) + " " + exact(b.distribution->a)
                + " " + exact(b.distribution->b);
        key += "\n";
    }
    if (!request.pythonReference)
        appendProgram(key, testCase.programs.reference);
    return key;
}

std::size_t referenceCacheCapacity()
{
    constexpr std::size_t kDefaultMiB = 1024;
    if (const char* text = std::getenv("KL_RUNNER_REFERENCE_CACHE_MB")) {
        char* end = nullptr;
        const long long mib = std::strtoll(text, &end, 10);
        if (end != text && mib >= 0)
            return static_cast<std::size_t>(mib) << 20;
    }
    return kDefaultMiB << 20;
}

bool referenceCacheOnDevice()
{
    const char* text = std::getenv("KL_RUNNER_REFERENCE_CACHE_PAGEABLE");
    return !(text && std::string(text) == "1");
}

} // namespace kl::runner
