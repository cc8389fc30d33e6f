// Findings as stored values and telemetry from runner dumps: JSON round trips, malformed input
// named by field, the loader over the protocol's result shape, and golden findings for every
// dump in tests/fixtures/findings (synthetic ones now, real H200 dumps named *-h200.json later).
// KL_UPDATE_GOLDEN=1 rewrites the golden files from the current rules.
#include "core/findings/synthesise.h"
#include "core/loop/evaluation.h"
#include "core/model/error.h"

#include "tests/findings/findings_fixtures.h"
#include <QDir>
#include <QTemporaryDir>

#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

using kl::Finding;
using nlohmann::json;
namespace fs = std::filesystem;
using kl::test::findingsFixtures;
using kl::test::readJsonFile;

namespace {

bool has(const std::vector<Finding>& findings, const std::string& id)
{
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
}

bool hasPrefix(const std::vector<Finding>& findings, const std::string& prefix)
{
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id.rfind(prefix, 0) == 0; });
}

void expectError(const std::function<void()>& f, const char* category, const char* where)
{
    try {
        f();
    } catch (const kl::Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QString::fromLatin1(category));
        QVERIFY2(std::string(e.what()).find(where) != std::string::npos, e.what());
        return;
    }
    QFAIL("no kl::Error was thrown");
}

json naive() { return readJsonFile(findingsFixtures() / "layernorm-naive-default-synthetic.json"); }

} // namespace

class TestFindingsIo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip()
    {
        const auto findings
            = kl::synthesise(kl::loadTelemetry(findingsFixtures() / "layernorm-t1024-spills-synthetic.json"));
        QVERIFY(findings.size() >= 3);
        const auto text = kl::toJson(findings).dump();
        const auto back = kl::findingsFromJson(json::parse(text));
        QVERIFY(back == findings);
        const auto one = kl::toJson(findings.front());
        QCOMPARE(one["severity"].get<std::string>(), std::string(kl::severityName(findings.front().severity)));
        QVERIFY(one["tuner_hints"].is_array());
        QVERIFY(kl::findingFromJson(one) == findings.front());
    }

    void malformedFindings_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("where");
        QTest::newRow("not an array") << QStringLiteral(R"({"id":"x"})") << QStringLiteral("findings");
        QTest::newRow("not an object") << QStringLiteral(R"([3])") << QStringLiteral("[0]");
        QTest::newRow("no id") << QStringLiteral(R"([{"severity":"info","title":"t"}])") << QStringLiteral("[0].id");
        QTest::newRow("empty id") << QStringLiteral(R"([{"id":"","severity":"info","title":"t"}])")
                                  << QStringLiteral("[0].id");
        QTest::newRow("bad severity") << QStringLiteral(R"([{"id":"a","severity":"fatal","title":"t"}])")
                                      << QStringLiteral("[0].severity");
        QTest::newRow("no title") << QStringLiteral(R"([{"id":"a","severity":"info"}])") << QStringLiteral("[0].title");
        QTest::newRow("evidence text") << QStringLiteral(
            R"([{"id":"a","severity":"info","title":"t","evidence":{"x":"1"}}])")
                                       << QStringLiteral("[0].evidence.x");
        QTest::newRow("direction number")
            << QStringLiteral(R"([{"id":"a","severity":"info","title":"t","directions":["a",2]}])")
            << QStringLiteral("[0].directions[1]");
        QTest::newRow("hints object") << QStringLiteral(
            R"([{"id":"a","severity":"info","title":"t","tuner_hints":{}}])")
                                      << QStringLiteral("[0].tuner_hints");
        QTest::newRow("priority text") << QStringLiteral(
            R"([{"id":"a","severity":"info","title":"t","priority":"high"}])")
                                       << QStringLiteral("[0].priority");
    }

    void malformedFindings()
    {
        QFETCH(QString, text);
        QFETCH(QString, where);
        const auto doc = json::parse(text.toStdString());
        expectError([&] { kl::findingsFromJson(doc); }, "findings.bad-json", where.toStdString().c_str());
    }

    void minimalFindingUsesDefaults()
    {
        const auto f = kl::findingFromJson(json::parse(R"({"id":"a.b","severity":"warning","title":"t","extra":1})"));
        QCOMPARE(f.id, std::string("a.b"));
        QCOMPARE(f.severity, Finding::Severity::Warning);
        QVERIFY(f.evidence.empty() && f.directions.empty() && f.tunerHints.empty());
        QCOMPARE(f.priority, 0.0);
    }

    void loaderReadsTheProtocolShape()
    {
        const auto t = kl::telemetryFromRecordedReply(naive());
        QCOMPARE(t.kernel, std::string("layernorm_gelu"));
        QCOMPARE(t.sizeLabel, std::string("8192x4096"));
        QCOMPARE(t.registers, 18);
        QCOMPARE(t.threadsPerBlock, 128);
        QCOMPARE(t.blocksPerSm, 16);
        QCOMPARE(t.occupancyLimiter, std::string("warps"));
        QCOMPARE(t.gridBlocks, std::int64_t(8192));
        QCOMPARE(t.smCount, 132);
        QCOMPARE(*t.medianUs, 135.2);
        QCOMPARE(*t.pctOfCopy, 26.5);
        QCOMPARE(*t.bytes, 134234112.0);
        QVERIFY(!t.graphMedianUs);
        // Copy ceiling at the problem's own byte count, from the copy's median (35.8 µs).
        QVERIFY(std::abs(*t.copyGbps - 134234112.0 / 35.8 / 1e3) < 1e-9);
        // 132 SMs × 128 FP32 lanes × 2 × 1.98 GHz.
        QVERIFY(std::abs(t.peakTflops - 66.908) < 0.01);
        QCOMPARE(t.metrics.size(), std::size_t(10));
        QCOMPARE(*t.metric(kl::metric::kDramThroughput), 20.9);
    }

    void loaderDerivesWhatIsMissing()
    {
        auto doc = naive();
        auto& c = doc["timing"]["cases"][0];
        c.erase("pct_of_copy"); // optional on the wire: older runners did not send it
        c.erase("copy");
        const auto t = kl::telemetryFromRecordedReply(doc);
        QCOMPARE(*t.gbps, c["gbps"].get<double>());
        QCOMPARE(*t.copyGbps, 4250.0); // the device's large-copy figure when the case has none
        QVERIFY(std::abs(*t.pctOfCopy - 100.0 * *t.gbps / 4250.0) < 1e-9);
        // FP32 CUDA cores at the timing's clock where the case names no precision ceiling.
        QVERIFY(t.peakTflops > 0);

        doc.erase("static");
        doc.erase("timing");
        const auto counters = kl::telemetryFromRecordedReply(doc);
        QCOMPARE(counters.registers, 0);
        QVERIFY(!counters.medianUs);
        QCOMPARE(counters.kernel, std::string("layernorm_gelu"));
        QVERIFY(!counters.metrics.empty());
    }

    void loaderWithoutCounters()
    {
        const auto t = kl::loadTelemetry(findingsFixtures() / "layernorm-naive-noprofile-synthetic.json");
        QVERIFY(t.metrics.empty());
        QVERIFY(t.medianUs.has_value());
        const auto findings = kl::synthesise(t);
        QVERIFY(has(findings, "bandwidth.under-ceiling"));
        QVERIFY(has(findings, "timing.noisy"));
        for (const auto* counterRule : { "dram.", "stall.", "cache.", "local-memory.traffic", "throughput." })
            QVERIFY2(!hasPrefix(findings, counterRule), counterRule);
    }

    void loaderPicksKernelAndSize()
    {
        auto doc = naive();
        auto other = doc["profile"]["kernels"][0];
        other["kernel"] = "second_pass";
        other["metrics"] = { { "gpu__time_duration.sum", 5000.0 } };
        doc["profile"]["kernels"].push_back(other);
        auto small = doc["timing"]["cases"][0];
        small["label"] = "1024x4096";
        small["candidate"]["median_us"] = 20.0;
        doc["timing"]["cases"].push_back(small);
        doc.erase("static");

        const auto second = kl::telemetryFromRecordedReply(doc, "second_pass");
        QCOMPARE(second.kernel, std::string("second_pass"));
        QCOMPARE(second.metrics.size(), std::size_t(1));
        const auto smaller = kl::telemetryFromRecordedReply(doc, {}, "1024x4096");
        QCOMPARE(*smaller.medianUs, 20.0);
        QCOMPARE(smaller.sizeLabel, std::string("1024x4096"));
        QVERIFY(smaller.metrics.empty()); // profiled at the main size only
    }

    void loaderErrors_data()
    {
        QTest::addColumn<QString>("edit"); // which damage to apply
        QTest::addColumn<QString>("where");
        QTest::newRow("not an object") << QStringLiteral("array") << QString();
        QTest::newRow("protocol 2") << QStringLiteral("v2") << QStringLiteral("v");
        QTest::newRow("nothing to read") << QStringLiteral("empty") << QStringLiteral("neither");
        QTest::newRow("unknown size") << QStringLiteral("size") << QStringLiteral("timing.cases");
        QTest::newRow("unknown kernel") << QStringLiteral("kernel") << QStringLiteral("profile.kernels");
        QTest::newRow("metrics a list") << QStringLiteral("metrics") << QStringLiteral("profile.kernels[0].metrics");
        QTest::newRow("cases an object") << QStringLiteral("cases") << QStringLiteral("timing.cases");
        QTest::newRow("static a number") << QStringLiteral("static") << QStringLiteral("static");
    }

    void loaderErrors()
    {
        QFETCH(QString, edit);
        QFETCH(QString, where);
        auto doc = naive();
        std::string kernel, size;
        if (edit == QLatin1String("array"))
            doc = json::array();
        else if (edit == QLatin1String("v2"))
            doc["v"] = 2;
        else if (edit == QLatin1String("empty"))
            for (const char* key : { "timing", "profile", "static" })
                doc.erase(key);
        else if (edit == QLatin1String("size"))
            size = "7x7";
        else if (edit == QLatin1String("kernel"))
            kernel = "nope";
        else if (edit == QLatin1String("metrics"))
            doc["profile"]["kernels"][0]["metrics"] = json::array({ 1, 2 });
        else if (edit == QLatin1String("cases"))
            doc["timing"]["cases"] = json::object();
        else if (edit == QLatin1String("static"))
            doc["static"] = 3;
        expectError([&] { kl::telemetryFromRecordedReply(doc, kernel, size); }, "findings.bad-telemetry",
            where.toStdString().c_str());
    }

    void loaderFileErrors()
    {
        QTemporaryDir dir;
        const fs::path base = dir.path().toStdString();
        expectError([&] { kl::loadTelemetry(base / "missing.json"); }, "findings.unreadable", "missing.json");
        std::ofstream(base / "broken.json") << "{\"v\":1,";
        expectError([&] { kl::loadTelemetry(base / "broken.json"); }, "findings.bad-json", "broken.json");
        std::ofstream(base / "v2.json") << R"({"v":2,"timing":{"cases":[]}})";
        expectError([&] { kl::loadTelemetry(base / "v2.json"); }, "findings.bad-telemetry", "v2.json");
    }

    void golden_data()
    {
        QTest::addColumn<QString>("name");
        const QDir dir(QString::fromStdString(findingsFixtures().string()));
        const auto files = dir.entryList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 7);
        for (const auto& f : files)
            QTest::newRow(qPrintable(f)) << f;
    }

    // The findings of every recorded dump, exactly as stored: a rule or wording change shows up
    // here and is accepted by regenerating (KL_UPDATE_GOLDEN=1) and reviewing the diff.
    void golden()
    {
        QFETCH(QString, name);
        const auto findings = kl::synthesise(kl::loadTelemetry(findingsFixtures() / name.toStdString()));
        const auto got = kl::toJson(findings);
        const auto path = findingsFixtures() / "golden" / name.toStdString();
        if (std::getenv("KL_UPDATE_GOLDEN")) {
            fs::create_directories(path.parent_path());
            std::ofstream(path) << got.dump(2) << "\n";
        }
        QVERIFY2(fs::exists(path),
            qPrintable(QStringLiteral("no golden file; run with KL_UPDATE_GOLDEN=1: ")
                + QString::fromStdString(path.string())));
        const auto expected = readJsonFile(path);
        QVERIFY2(got == expected, qPrintable(QString::fromStdString(got.dump(2))));
        QVERIFY(kl::findingsFromJson(expected) == findings);
    }

    // What the synthetic LayerNorm+GELU dumps must say, whatever the wording.
    void layernormStory()
    {
        auto load = [](const char* name) { return kl::synthesise(kl::loadTelemetry(findingsFixtures() / name)); };

        const auto naiveDefault = load("layernorm-naive-default-synthetic.json");
        QCOMPARE(naiveDefault.front().id, std::string("bandwidth.under-ceiling"));
        QCOMPARE(naiveDefault.front().severity, Finding::Severity::Critical);
        const auto& hints = naiveDefault.front().tunerHints;
        QVERIFY(std::find(hints.begin(), hints.end(), "wider-vectors") != hints.end());
        QVERIFY(has(naiveDefault, "roofline.memory-bound"));
        QVERIFY(has(naiveDefault, "dram.low-throughput"));
        QVERIFY(!hasPrefix(naiveDefault, "occupancy."));
        QVERIFY(!has(naiveDefault, "memory.excess-dram-traffic"));

        const auto naiveStalls = load("layernorm-naive-stalls-synthetic.json");
        QVERIFY(has(naiveStalls, "stall.long_scoreboard"));
        QVERIFY(has(naiveStalls, "stall.barrier"));

        const auto vectorised = load("layernorm-vectorised-sol-synthetic.json");
        QVERIFY(has(vectorised, "dram.low-throughput"));
        QVERIFY(has(vectorised, "throughput.latency-bound"));
        QVERIFY(!hasPrefix(vectorised, "occupancy."));
        QVERIFY(!has(vectorised, "cache.l2-hit-rate-low")); // streaming: each byte crosses DRAM once
        QVERIFY(!has(vectorised, "shared.bank-conflicts"));

        const auto registers = load("layernorm-cache4-registers-synthetic.json");
        QVERIFY(has(registers, "occupancy.register-limited"));

        const auto spills = load("layernorm-t1024-spills-synthetic.json");
        QVERIFY(has(spills, "local-memory.spills"));
        QVERIFY(has(spills, "local-memory.traffic"));
        QVERIFY(has(spills, "local-memory.stack-frame")); // 72-byte frame beyond 64 bytes of spill stores
        QVERIFY(!hasPrefix(spills, "occupancy.register")); // exactly 50%: at the threshold, silent
    }
};

QTEST_APPLESS_MAIN(TestFindingsIo)
#include "test_findings_io.moc"
