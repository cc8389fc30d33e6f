// The loop reads the runner's reply as the typed value it decoded once, and the store's record holds
// that value: for every real H200 reply in tests/fixtures/findings (and a two-size reply) the record's
// figures are the reply's first size's, its metrics the reply's kernels' (kernel, size, counter), and
// the columns the store writes are the reply's own JSON of each part, byte for byte. The telemetry has one decoder
// (telemetryFromResult); a recorded reply read through the protocol (telemetryFromRecordedReply) gives the same, and
// the findings of the typed telemetry are the golden findings of the dump.
#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/loop/evaluation.h"
#include "core/model/error.h"
#include "core/protocol/messages.h"
#include "core/store/code_listings.h"
#include "core/store/compile_columns.h"
#include "core/store/runner_result.h"

#include "tests/findings/findings_fixtures.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <functional>

using nlohmann::json;
namespace fs = std::filesystem;
using kl::test::findingsFixtures;
using kl::test::readJsonFile;

namespace {

json optionalJson(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// Every field of a Telemetry, so that a difference shows which one.
json telemetryJson(const kl::Telemetry& t)
{
    json j = kl::store::staticTelemetryJson(t);
    j["sm_count"] = t.smCount;
    j["size_label"] = t.sizeLabel;
    for (const auto& [key, value] : { std::pair<const char*, const std::optional<double>*> { "median_us", &t.medianUs },
             { "gbps", &t.gbps }, { "pct_of_copy", &t.pctOfCopy }, { "copy_gbps", &t.copyGbps }, { "bytes", &t.bytes },
             { "flops", &t.flops }, { "tflops", &t.tflops }, { "cv", &t.cv }, { "graph_median_us", &t.graphMedianUs } })
        j[key] = optionalJson(*value);
    j["peak_tflops"] = t.peakTflops;
    j["metrics"] = t.metrics;
    return j;
}

// What the record says of the reply, read from the recorded JSON itself: the first size's figures and
// every profiled metric as "KERNEL/CASE/METRIC".
json expectedRecord(const json& reply)
{
    const auto& first = reply["timing"]["cases"][0];
    json metrics = json::object();
    for (const auto& kernel : reply["profile"]["kernels"])
        for (const auto& [name, value] : kernel["metrics"].items())
            metrics[kernel["kernel"].get<std::string>() + "/" + kernel["case"].get<std::string>() + "/" + name] = value;
    return { { "median_us", first["candidate"]["median_us"] }, { "gbps", first["gbps"] },
        { "pct_of_copy", first["pct_of_copy"] }, { "metrics", metrics } };
}

json recordJson(const kl::store::ResultRecord& r)
{
    json metrics = json::object();
    for (const auto& [key, value] : r.metrics)
        metrics[kl::store::metricName(key)] = value;
    return { { "median_us", optionalJson(r.medianUs) }, { "gbps", optionalJson(r.gbps) },
        { "pct_of_copy", optionalJson(r.pctOfCopy) }, { "metrics", metrics } };
}

// The columns the store writes hold what the loop stored before the record was typed: the protocol's
// JSON of each part of the reply.
void compareColumns(const kl::store::ResultRecord& record, const kl::protocol::EvaluateResult& typed)
{
    const json wire = typed;
    const json columns = kl::store::storedColumns(record);
    for (const char* part : { "verification", "timing", "device", "profile", "pc_sampling" })
        QCOMPARE(QString::fromStdString(columns[part].dump()), QString::fromStdString(wire[part].dump()));
}

void compareJson(const json& typed, const json& fromJson)
{
    if (typed != fromJson)
        QFAIL(("typed path:\n" + typed.dump(1) + "\nJSON path:\n" + fromJson.dump(1)).c_str());
}

// The same kl::Error category from both paths.
void expectBothFail(const std::function<void()>& typed, const std::function<void()>& fromJson)
{
    for (const auto& f : { typed, fromJson }) {
        try {
            f();
            QFAIL("no kl::Error was thrown");
        } catch (const kl::Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("findings.bad-telemetry"));
        }
    }
}

// The reply as a second main size: another label, another speedup, its own profiled kernel.
json withSecondSize(json reply)
{
    auto second = reply["timing"]["cases"][0];
    second["label"] = "4096x4096";
    second["speedup_vs_baseline"] = 2.0;
    second["gbps"] = 1234.5;
    second["candidate"]["median_us"] = 20.0;
    reply["timing"]["cases"].push_back(second);
    auto kernel = reply["profile"]["kernels"][0];
    kernel["case"] = "4096x4096";
    kernel["metrics"]["gpu__time_duration.sum"] = 20000.0;
    reply["profile"]["kernels"].push_back(kernel);
    return reply;
}

} // namespace

class TestTypedResult : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A cached row knows its code from the listings stored with it: the SASS where nvdisasm ran, else the
    // PTX; a row without listings leaves the count to the stored static telemetry.
    void storedListingsGiveTheTensorInstructions()
    {
        kl::store::CompileRecord compile;
        QVERIFY(!kl::storedTensorInstructions(compile));
        compile.listings.ptx = kl::store::packedText("\tcvt.f32.f16 %f1, %h1;\n\tfma.rn.f32 %f2, %f1, %f1, %f2;\n");
        const auto fromPtx = kl::storedTensorInstructions(compile);
        QVERIFY(fromPtx);
        QCOMPARE(fromPtx->count, std::int64_t(0));
        QCOMPARE(fromPtx->text(), std::string("no mma.sync/wgmma.mma_async/wmma.mma in the PTX"));
        compile.listings.sass
            = kl::store::packedText(".text.gemm:\n"
                                    "        /*0000*/                   HMMA.16816.F32 R4, R8, R12, R4 ;\n"
                                    "        /*0010*/                   EXIT ;\n");
        const auto fromSass = kl::storedTensorInstructions(compile);
        QVERIFY(fromSass);
        QCOMPARE(fromSass->text(), std::string("1 HMMA in the SASS"));
        // And the static telemetry carries the PTX count through the stored row's JSON.
        kl::Telemetry t;
        t.tensorInstructions = kl::lines::TensorInstructions { 2, "PTX", { { "mma.sync", 2 } } };
        const auto back = kl::store::staticTelemetryFromJson(kl::store::staticTelemetryJson(t));
        QVERIFY(back.tensorInstructions);
        QCOMPARE(back.tensorInstructions->text(), std::string("2 mma.sync in the PTX"));
    }

    void sameRecordAndTelemetry_data()
    {
        QTest::addColumn<QString>("file");
        int count = 0;
        for (const auto& entry : fs::directory_iterator(findingsFixtures())) {
            const auto name = entry.path().filename().string();
            if (name.size() > 10 && name.substr(name.size() - 10) == "-h200.json") {
                QTest::newRow(name.c_str()) << QString::fromStdString(name);
                ++count;
            }
        }
        QVERIFY2(count >= 6, "the real H200 replies are missing from tests/fixtures/findings");
    }

    void sameRecordAndTelemetry()
    {
        QFETCH(QString, file);
        const auto raw = readJsonFile(findingsFixtures() / file.toStdString());
        const auto typed = raw.get<kl::protocol::EvaluateResult>();
        QVERIFY(typed.timing && typed.profile && typed.device);

        // The record: the figures and metrics those of the recorded reply; every column the reply's own part.
        const auto record = kl::store::resultFromEvaluateResult(typed, "13.0");
        compareJson(recordJson(record), expectedRecord(raw));
        compareColumns(record, typed);
        QVERIFY(record.timing == typed.timing && record.verification == typed.verification);
        QVERIFY(record.medianUs && *record.medianUs > 0);
        QVERIFY(record.speedup && *record.speedup > 0);
        QVERIFY(!record.metrics.empty());
        QCOMPARE(kl::store::resultFromEvaluateResult(typed).toolkit, std::string("13.0")); // the device's

        // The telemetry, with the dump's static facts, and the findings the golden file holds.
        const auto statics = kl::store::staticTelemetryFromJson(raw["static"]);
        const auto telemetry = kl::telemetryFromResult(typed, statics);
        compareJson(telemetryJson(telemetry), telemetryJson(kl::telemetryFromRecordedReply(raw)));
        QVERIFY(telemetry.peakTflops > 0);
        QVERIFY(telemetry.copyGbps && telemetry.pctOfCopy);
        QVERIFY(!telemetry.metrics.empty());
        const auto golden = readJsonFile(findingsFixtures() / "golden" / file.toStdString());
        compareJson(kl::toJson(kl::synthesise(telemetry)), golden);

        // Named kernel and size, and names the reply does not hold.
        const auto kernel = raw["profile"]["kernels"][0]["kernel"].get<std::string>();
        const auto size = raw["timing"]["cases"][0]["label"].get<std::string>();
        compareJson(telemetryJson(kl::telemetryFromResult(typed, statics, kernel, size)),
            telemetryJson(kl::telemetryFromRecordedReply(raw, kernel, size)));
        expectBothFail([&] { kl::telemetryFromResult(typed, statics, {}, "1x1"); },
            [&] { kl::telemetryFromRecordedReply(raw, {}, "1x1"); });
        expectBothFail([&] { kl::telemetryFromResult(typed, statics, "no_such_kernel"); },
            [&] { kl::telemetryFromRecordedReply(raw, "no_such_kernel"); });
    }

    void twoSizes()
    {
        const auto raw = withSecondSize(readJsonFile(findingsFixtures() / "layernorm-tuned-best-stalls-h200.json"));
        const auto typed = raw.get<kl::protocol::EvaluateResult>();
        const auto record = kl::store::resultFromEvaluateResult(typed);
        compareJson(recordJson(record), expectedRecord(raw));
        compareColumns(record, typed);
        QCOMPARE(record.sizes.size(), std::size_t(2));
        QCOMPARE(record.sizes[1].label, std::string("4096x4096"));
        // Headline of the first size, speedup the geometric mean of both.
        QCOMPARE(*record.medianUs, *record.sizes[0].medianUs);
        QVERIFY(qFuzzyCompare(*record.speedup, std::sqrt(*record.sizes[0].speedup * 2.0)));
        QVERIFY(record.metrics.count({ "layernorm_gelu", "4096x4096", "gpu__time_duration.sum" }));

        const auto statics = kl::store::staticTelemetryFromJson(raw["static"]);
        const auto second = kl::telemetryFromResult(typed, statics, {}, "4096x4096");
        compareJson(telemetryJson(second), telemetryJson(kl::telemetryFromRecordedReply(raw, {}, "4096x4096")));
        QCOMPARE(second.sizeLabel, std::string("4096x4096"));
        QCOMPARE(*second.medianUs, 20.0);
        QCOMPARE(second.metrics.at("gpu__time_duration.sum"), 20000.0);
    }

    void staticFactsRoundTrip()
    {
        const auto raw = readJsonFile(findingsFixtures() / "layernorm-naive-default-h200.json");
        const auto statics = kl::store::staticTelemetryFromJson(raw["static"]);
        compareJson(kl::store::staticTelemetryJson(statics), raw["static"]);
        try {
            kl::store::staticTelemetryFromJson(json::array());
            QFAIL("an array was read as static facts");
        } catch (const kl::Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("findings.bad-telemetry"));
        }
    }
};

QTEST_GUILESS_MAIN(TestTypedResult)
#include "test_typed_result.moc"
