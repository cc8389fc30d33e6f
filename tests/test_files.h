#pragma once
// Reading test inputs whole: a file's bytes, or a file of the source tree by its path under
// KL_SOURCE_DIR (defined for every suite by kl_add_qtest).
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

// `relative`: a path under the source tree, e.g. "tests/fixtures/lines/pointer_chase.nvdisasm.txt".
inline std::string sourceText(const std::string& relative)
{
    return readText(std::string(KL_SOURCE_DIR) + "/" + relative);
}

} // namespace kl::test
