// A stored result's verification, decoded once by the store, as report rows and their text.

#include "core/report/verification_report.h"

#include "core/model/number_text.h"
#include "core/protocol/category.h"
#include "core/store/records.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kl::report {

namespace {

} // namespace

std::optional<std::vector<VerifiedCase>> verificationReport(const store::ResultRecord& result)
{
    const auto& verification = result.verification;
    if (!verification)
        return std::nullopt;
    std::vector<VerifiedCase> cases;
    for (const protocol::CaseVerification& c : verification->cases) {
        VerifiedCase v;
        v.size = c.label;
        v.kind = std::string(protocol::caseKindName(c.kind));
        v.trial = c.trial;
        v.elements = c.elements;
        v.maxAbsError = c.maxAbsError;
        v.maxRelError = c.maxRelError;
        v.mismatches = c.mismatches;
        v.nan = c.nan;
        v.unwritten = c.unwritten;
        v.passed = c.passed;
        v.verdict = c.passed ? std::string("passed")
            : c.category     ? std::string(protocol::categoryName(*c.category))
                             : std::string("failed");
        v.worstOutput = c.worstOutput;
        if (!c.passed && c.window) {
            v.windowStart = c.window->start;
            v.expected = c.window->expected;
            v.actual = c.window->actual;
        }
        cases.push_back(std::move(v));
    }
    return cases;
}

std::string listText(const std::vector<std::int64_t>& values)
{
    std::string text;
    for (const auto v : values)
        text += (text.empty() ? "" : ", ") + std::to_string(v);
    return "[" + text + "]";
}

std::string listText(const std::vector<double>& values)
{
    std::string text;
    for (const double v : values)
        text += (text.empty() ? "" : ", ") + shortNumber(v, 3);
    return "[" + text + "]";
}

std::string verifiedCaseText(const VerifiedCase& c)
{
    return c.size + " " + c.kind + " #" + std::to_string(c.trial) + ": " + std::to_string(c.elements)
        + " elements, max abs " + shortNumber(c.maxAbsError, 3) + ", max rel " + shortNumber(c.maxRelError, 3) + ", "
        + std::to_string(c.mismatches) + " off, " + std::to_string(c.nan) + " NaN, " + std::to_string(c.unwritten)
        + " unwritten: " + c.verdict;
}

std::string sizesVerifiedText(const std::vector<VerifiedCase>& cases)
{
    std::set<std::string> sizes;
    int trials = 0;
    for (const VerifiedCase& c : cases) {
        sizes.insert(c.size);
        trials = std::max(trials, c.trial + 1);
    }
    std::string labels;
    for (const std::string& s : sizes)
        labels += (labels.empty() ? "" : ", ") + s;
    return std::to_string(sizes.size()) + " (" + labels + "), " + std::to_string(trials)
        + " trial(s) each, fresh random inputs";
}

} // namespace kl::report
