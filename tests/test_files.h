#pragma once
// Reading test inputs whole: a file's bytes, or a file of the source tree by its path under
// KL_SOURCE_DIR (defined for every suite by kl_add_qtest; the environment variable of the same name
// wins, so a suite carried to the GPU machine finds the checkout it runs in).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kl::test {

inline std::string readText(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string sourceDir()
{
    const char* fromEnvironment = std::getenv("KL_SOURCE_DIR");
    return fromEnvironment && *fromEnvironment ? std::string(fromEnvironment) : std::string(KL_SOURCE_DIR);
}

// `relative`: a path under the source tree, e.g. "tests/fixtures/lines/pointer_chase.nvdisasm.txt".
inline std::string sourceText(const std::string& relative) { return readText(sourceDir() + "/" + relative); }

} // namespace kl::test
