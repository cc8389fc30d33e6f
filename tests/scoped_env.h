#pragma once
// Environment variables set for one test's scope: unset however the test ends (a failing check
// returns early), so that the next test function does not inherit them. Processes started meanwhile
// (runners, the CLI) inherit them.
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace kl::test {

struct ScopedEnv {
    std::vector<std::string> names;
    ScopedEnv(std::initializer_list<std::pair<std::string, std::string>> values)
    {
        for (const auto& [k, v] : values) {
            ::setenv(k.c_str(), v.c_str(), 1);
            names.push_back(k);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv()
    {
        for (const auto& k : names)
            ::unsetenv(k.c_str());
    }
};

} // namespace kl::test
