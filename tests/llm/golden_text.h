#pragma once
// Golden text files for the prompt tests: the file's text (rewritten first from `sent` when
// KL_UPDATE_GOLDEN is set) and, on a mismatch, the first differing line for the failure message.
#include "tests/test_files.h"

#include <QtGlobal>

#include <fstream>
#include <sstream>
#include <string>

namespace kl::test {

// The golden file's text; with KL_UPDATE_GOLDEN=1 the file is written from `sent` first.
inline std::string goldenText(const std::string& golden, const std::string& sent)
{
    if (qEnvironmentVariableIsSet("KL_UPDATE_GOLDEN"))
        std::ofstream(golden, std::ios::binary) << sent;
    return readText(golden);
}

inline std::string firstDifference(const std::string& want, const std::string& got)
{
    std::istringstream a(want), b(got);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
        if (ea && eb)
            return "identical";
        if (ea != eb || la != lb)
            return "line " + std::to_string(line) + ": golden \"" + la + "\", sent \"" + lb + "\"";
    }
}

} // namespace kl::test
