#pragma once
// Realistic rows for the store tests: a problem, a candidate, a runner-like result with timing
// samples, findings, a decision and an LLM exchange. `seed` varies the numbers so rows differ.
#include "core/model/error.h"
#include "core/store/records.h"
#include "core/store/store.h"

#include <QString>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <functional>
#include <string>
#include <vector>

namespace kl::store::fixtures {

ProblemRecord problem(const std::string& name = "layernorm_gelu");
CandidateRecord candidate(int seed, std::optional<std::int64_t> parent = std::nullopt);
ResultRecord passedResult(int seed);
ResultRecord failedResult(int seed);
std::vector<FindingRecord> findings(int seed);
ExchangeRecord exchange(int seed);

// Finished tuner sessions on problem(), each of passed iterations (candidate(i), passedResult(i));
// `adjust` may change a result before it is recorded.
struct TunerSessions {
    int sessions = 2;
    int iterations = 3;
    bool findings = false; // record findings(i) for each iteration
    std::function<void(int session, int iteration, ResultRecord&)> adjust = {};
};
void recordTunerSessions(Store& store, const TunerSessions& what);

// The category of the kl::Error that `action` throws, or "no error".
template <typename Action> std::string errorCategory(Action&& action)
{
    try {
        action();
    } catch (const kl::Error& error) {
        return error.category();
    }
    return "no error";
}

// New store file names in a test's temporary folder, "<what>-<n>.db", none used twice.
class FreshPaths {
public:
    explicit FreshPaths(const QTemporaryDir& dir)
        : m_dir(dir)
    {
    }
    std::string operator()(const char* what = "store")
    {
        return m_dir.filePath(QStringLiteral("%1-%2.db").arg(QString::fromLatin1(what)).arg(++m_count)).toStdString();
    }

private:
    const QTemporaryDir& m_dir;
    int m_count = 0;
};

} // namespace kl::store::fixtures

// QCOMPARE for std::string, with readable failure messages.
#define KL_COMPARE_TEXT(actual, expected)                                                                              \
    QCOMPARE(QString::fromStdString(std::string(actual)), QString::fromStdString(std::string(expected)))
#define KL_COMPARE_JSON(actual, expected) KL_COMPARE_TEXT((actual).dump(), (expected).dump())
