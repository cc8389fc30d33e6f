// The runner's reference-output cache on the CPU: its key (runner/reference_cache.h) over requests
// built the way the loop builds them (the bundled layernorm_gelu problem, NVRTC-compiled reference,
// baseline and candidates, the core's request builder), and its byte-bounded LRU bookkeeping. The GPU
// side (restore, checksum, hits in a real runner): test_gpu_examples::referenceOutputsComeFromTheRunnersCache.
#include "core/model/problem.h"
#include "core/runnerclient/evaluate_job.h"
#include "runner/reference_cache.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

using namespace kl;

namespace {

std::filesystem::path problemFile()
{
    return std::filesystem::path(KL_SOURCE_DIR) / "resources" / "examples" / "layernorm_gelu" / "problem.json";
}

nlohmann::json problemJson()
{
    std::ifstream in(problemFile());
    return nlohmann::json::parse(in);
}

Problem withJson(const nlohmann::json& j) { return parseProblem(j.dump(), problemFile()); }

protocol::EvaluateRequest requestFor(
    const Problem& problem, const TunableValues& overrides = {}, const protocol::EvaluateOptions& options = {})
{
    const TunedCandidate candidate { problem.baseline, problem.baseline.withOverrides(overrides) };
    const TunedCandidate baseline { problem.baseline, problem.baseline.defaults() };
    const EvaluateJob job = compileEvaluateJob(problem, candidate, baseline);
    if (const CompiledCandidate* failed = job.firstCompileFailure())
        qFatal("%s does not compile: %s", failed->tuned.candidate.fileName.c_str(), failed->compiled.summary.c_str());
    return buildEvaluateRequest(problem, job, options);
}

std::vector<std::string> keysOf(const protocol::EvaluateRequest& request, std::uint64_t seed)
{
    std::vector<std::string> keys;
    for (const protocol::Case& c : request.cases)
        keys.push_back(runner::referenceCacheKey(request, c, seed));
    return keys;
}

} // namespace

class TestReferenceCache : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_problem = loadProblem(problemFile());
        m_request = requestFor(m_problem);
        QVERIFY(m_request.cases.size() > 2);
    }

    void everyCaseAndSeedHasItsOwnKey()
    {
        std::set<std::string> seen;
        for (std::uint64_t seed : { 1234u, 1235u })
            for (const std::string& key : keysOf(m_request, seed))
                QVERIFY2(seen.insert(key).second, "two cases or seeds share a key");
        QCOMPARE(seen.size(), 2 * m_request.cases.size());
    }

    void otherCandidatesAndOptionsShareTheKeys()
    {
        // Another candidate of the same problem (other tunables: another cubin, other launches), with
        // other tolerances, timing and profiling options: the reference computes the same outputs.
        protocol::EvaluateOptions options;
        options.timeBudgetMs = 50.0;
        options.profile = protocol::MetricSet::Stalls;
        options.repetitions = protocol::EvaluateOptions::Repetitions::Fixed;
        protocol::EvaluateRequest other = requestFor(m_problem, { { "THREADS", 256 }, { "VEC", 8 } }, options);
        QVERIFY(other.modules.candidate.cubin != m_request.modules.candidate.cubin);
        QVERIFY(other.cases.front().programs.candidate.launches.front().block
            != m_request.cases.front().programs.candidate.launches.front().block);
        for (auto& [type, tolerance] : other.tolerances)
            tolerance.atol *= 10.0;
        other.options.seed = m_request.options.seed;
        QCOMPARE(keysOf(other, 77), keysOf(m_request, 77));
    }

    void theReferenceItselfIsInTheKey()
    {
        protocol::EvaluateRequest other = m_request;
        other.modules.reference.cubin.back() ^= 0x01; // one bit of another reference module
        const auto before = keysOf(m_request, 5), after = keysOf(other, 5);
        for (std::size_t i = 0; i < before.size(); ++i)
            QVERIFY(before[i] != after[i]);

        other = m_request; // one launch of the reference planned differently
        other.cases.front().programs.reference.launches.front().grid[0] += 1;
        QVERIFY(keysOf(other, 5).front() != before.front());
        QCOMPARE(keysOf(other, 5).back(), before.back());
    }

    void problemTextChangesTheKeys_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value"); // JSON
        QTest::newRow("scalar eps") << QStringLiteral("/scalars/0/value") << QStringLiteral("2e-5");
        QTest::newRow("input distribution") << QStringLiteral("/inputs/0/distribution/std") << QStringLiteral("3.0");
        QTest::newRow("distribution kind")
            << QStringLiteral("/inputs/1/distribution") << QStringLiteral(R"({"kind": "constant", "value": 1.0})");
        QTest::newRow("main size") << QStringLiteral("/sizes/main/0/M") << QStringLiteral("4096");
        QTest::newRow("row padding") << QStringLiteral("/inputs/0/row_padding") << QStringLiteral("\"16\"");
    }
    void problemTextChangesTheKeys()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        nlohmann::json j = problemJson();
        j[nlohmann::json::json_pointer(field.toStdString())] = nlohmann::json::parse(value.toStdString());
        const protocol::EvaluateRequest changed = requestFor(withJson(j));
        const auto before = keysOf(m_request, 9), after = keysOf(changed, 9);
        QCOMPARE(after.size(), before.size());
        int differing = 0;
        for (std::size_t i = 0; i < before.size(); ++i)
            differing += before[i] != after[i];
        // Every case where the change shows: the main size's two (plain and padded) when a main size
        // changed, the padded ones when the padding did, all of them otherwise.
        int padded = 0;
        for (const protocol::Case& c : m_request.cases)
            padded += c.kind == protocol::CaseKind::Padded;
        QVERIFY(padded > 0);
        const int expected = field.startsWith(QStringLiteral("/sizes/main")) ? 2
            : field.endsWith(QStringLiteral("row_padding"))                  ? padded
                                                                             : int(before.size());
        QCOMPARE(differing, expected);
    }

    void anUnchangedProblemReloadedKeepsItsKeys()
    {
        QCOMPARE(keysOf(requestFor(withJson(problemJson())), 3), keysOf(m_request, 3));
    }

    void aPythonReferenceIsKeyedByItsSourceAndShapes()
    {
        protocol::EvaluateRequest python = m_request;
        python.modules.reference.cubin.clear();
        python.pythonReference = protocol::PythonReference { "def reference(x, gamma, beta, y, eps):\n    ...\n",
            "reference.py", { { "eps", 1e-5 } } };
        for (protocol::Case& c : python.cases) {
            c.programs.reference = {};
            c.shapes["x"] = { c.buffers.front().rows, c.buffers.front().rowLength };
        }
        const auto base = keysOf(python, 1);
        QVERIFY(base.front() != keysOf(m_request, 1).front());

        protocol::EvaluateRequest edited = python;
        edited.pythonReference->source += "# edited\n";
        QVERIFY(keysOf(edited, 1).front() != base.front());
        edited = python;
        edited.pythonReference->scalars["eps"] = 2e-5;
        QVERIFY(keysOf(edited, 1).front() != base.front());
        edited = python;
        edited.cases.front().shapes["x"] = { 1, 8192 * 4096 };
        QVERIFY(keysOf(edited, 1).front() != base.front());
        QCOMPARE(keysOf(edited, 1).back(), base.back());
    }

    void theCacheKeepsTheMostRecentlyUsedWithinItsBytes()
    {
        runner::ByteBoundedCache<std::string> cache(100);
        QVERIFY(cache.enabled());
        QVERIFY(cache.insert("a", "A", 40));
        QVERIFY(cache.insert("b", "B", 40));
        QCOMPARE(cache.bytes(), std::size_t(80));
        QVERIFY(cache.find("a")); // a is now the most recent: b goes first
        QVERIFY(cache.insert("c", "C", 40));
        QCOMPARE(cache.size(), std::size_t(2));
        QVERIFY(!cache.find("b"));
        QCOMPARE(*cache.find("a"), std::string("A"));
        QCOMPARE(*cache.find("c"), std::string("C"));
        QCOMPARE(cache.bytes(), std::size_t(80));

        QVERIFY(cache.insert("a", "A2", 10)); // replaced, not added
        QCOMPARE(cache.size(), std::size_t(2));
        QCOMPARE(cache.bytes(), std::size_t(50));
        QCOMPARE(*cache.find("a"), std::string("A2"));

        QVERIFY(!cache.insert("huge", "H", 101)); // larger than the whole cache: not kept, nothing evicted
        QCOMPARE(cache.size(), std::size_t(2));
        QVERIFY(!cache.find("huge"));

        cache.erase("c");
        QCOMPARE(cache.bytes(), std::size_t(10));
        QVERIFY(!cache.find("c"));

        runner::ByteBoundedCache<std::string> off(0);
        QVERIFY(!off.enabled());
        QVERIFY(!off.insert("a", "A", 1));
    }

    void theCapacityComesFromTheEnvironment()
    {
        qunsetenv("KL_RUNNER_REFERENCE_CACHE_MB");
        QCOMPARE(runner::referenceCacheCapacity(), std::size_t(1024) << 20);
        qputenv("KL_RUNNER_REFERENCE_CACHE_MB", "0");
        QCOMPARE(runner::referenceCacheCapacity(), std::size_t(0));
        qputenv("KL_RUNNER_REFERENCE_CACHE_MB", "64");
        QCOMPARE(runner::referenceCacheCapacity(), std::size_t(64) << 20);
        qputenv("KL_RUNNER_REFERENCE_CACHE_MB", "lots");
        QCOMPARE(runner::referenceCacheCapacity(), std::size_t(1024) << 20);
        qunsetenv("KL_RUNNER_REFERENCE_CACHE_MB");
    }

private:
    Problem m_problem;
    protocol::EvaluateRequest m_request;
};

QTEST_GUILESS_MAIN(TestReferenceCache)
#include "test_reference_cache.moc"
