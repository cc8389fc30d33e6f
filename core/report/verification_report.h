#pragma once
// The verification report of one stored result, as both front ends show it: per verified case (size,
// kind, trial) the elements compared, the largest absolute and relative errors, mismatches, NaN and
// unwritten elements and the verdict; for a failed case the window of expected against actual values
// around its worst element. The GUI's Verification page and `kernelloop-cli show` read these rows.
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl::report {

struct VerifiedCase {
    std::string size; // the case's label
    std::string kind; // "main", "fuzz"
    int trial = 0;
    std::int64_t elements = 0;
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    std::int64_t mismatches = 0;
    std::int64_t nan = 0;
    std::int64_t unwritten = 0;
    bool passed = false;
    std::string verdict; // "passed", or the failure's category ("wrong-result", ...)
    // A failed case's worst element: which output, and the values around it.
    std::string worstOutput;
    std::vector<std::int64_t> windowStart;
    std::vector<double> expected;
    std::vector<double> actual;
};

// The result's verified cases, in the runner's order; none when it was not verified (it stopped before).
std::optional<std::vector<VerifiedCase>> verificationReport(const store::ResultRecord& result);

// "8192x4096 main #0: 33554432 elements, max abs 0.00195, max rel 0.00098, 0 off, 0 NaN, 0 unwritten: passed"
std::string verifiedCaseText(const VerifiedCase& c);
// "[3, 17]": an index or values as a short list.
std::string listText(const std::vector<std::int64_t>& values);
std::string listText(const std::vector<double>& values);
// The sizes verified and the trials of each: "2 (8192x4096, 1024x4096), 2 trial(s) each, fresh random inputs"
std::string sizesVerifiedText(const std::vector<VerifiedCase>& cases);

} // namespace kl::report
