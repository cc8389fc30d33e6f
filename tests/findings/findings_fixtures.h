#pragma once
// The recorded runner replies under tests/fixtures/findings (see its README), for the suites that
// read them: the findings' own and the loop's typed-result suite.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace kl::test {

inline std::filesystem::path findingsFixtures()
{
    return std::filesystem::path(KL_SOURCE_DIR) / "tests/fixtures/findings";
}

inline nlohmann::json readJsonFile(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

} // namespace kl::test
