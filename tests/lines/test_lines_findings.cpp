// The lines.* findings rules on the recorded-shape reply: the hottest line named with its share
// and dominant warp state, directions and tuner hints by state, dropped samples flagged, a
// malformed value refused as bad telemetry, and replies without samples untouched.
#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/loop/evaluation.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace kl;

namespace {

nlohmann::json reply(const std::string& name)
{
    std::ifstream in(std::filesystem::path(KL_SOURCE_DIR) / "tests" / "fixtures" / name);
    return nlohmann::json::parse(in);
}

const Finding* find(const std::vector<Finding>& findings, const std::string& id)
{
    for (const Finding& f : findings)
        if (f.id == id)
            return &f;
    return nullptr;
}

} // namespace

class TestLinesFindings : public QObject {
    Q_OBJECT

private slots:
    void namesTheHottestLine()
    {
        const Telemetry t = telemetryFromRecordedReply(reply("lines/pointer_chase-lines-h200.json"));
        QVERIFY(t.lineSamples);
        const auto findings = synthesise(t);
        const Finding* hot = find(findings, "lines.hot-line");
        QVERIFY(hot);
        QCOMPARE(hot->title, std::string("100% of samples on line 11, long_scoreboard (99% of the line's)"));
        QCOMPARE(hot->severity, Finding::Severity::Warning);
        QCOMPARE(hot->evidence.at("line"), 11.0);
        QVERIFY(hot->explanation.find("waits for a global, local or texture memory load") != std::string::npos);
        QCOMPARE(hot->tunerHints, (std::vector<std::string> { hint::kMoreIlp, hint::kMoreBytesInFlight }));
        QVERIFY(!find(findings, "lines.samples-dropped"));
    }

    void bankConflictsPointToPadding()
    {
        // The planted bank conflict as the H200 sampled it: line 19, short_scoreboard.
        const auto findings = synthesise(telemetryFromRecordedReply(reply("lines/bank_conflict-lines-h200.json")));
        const Finding* hot = find(findings, "lines.hot-line");
        QVERIFY(hot);
        QCOMPARE(hot->title, std::string("97% of samples on line 19, short_scoreboard (98% of the line's)"));
        QCOMPARE(hot->evidence.at("line"), 19.0);
        QCOMPARE(hot->tunerHints, (std::vector<std::string> { hint::kPadShared }));
        QVERIFY(!find(findings, "lines.samples-dropped"));
        // The same advice when the shared-memory pipe throttles instead.
        nlohmann::json r = reply("lines/pointer_chase-lines-h200.json");
        for (auto& pc : r["pc_sampling"]["pcs"])
            if (pc["line"] == 11)
                pc["stalls"] = { { "mio_throttle", 90 }, { "short_scoreboard", 40 }, { "selected", 5 } };
        const auto throttledFindings = synthesise(telemetryFromRecordedReply(r));
        const Finding* throttled = find(throttledFindings, "lines.hot-line");
        QVERIFY(throttled);
        QVERIFY2(throttled->title.find("mio_throttle") != std::string::npos, throttled->title.c_str());
        QCOMPARE(throttled->tunerHints, (std::vector<std::string> { hint::kPadShared }));
    }

    void flagsDroppedSamplesAndQuietLines()
    {
        nlohmann::json r = reply("lines/pointer_chase-lines-h200.json");
        r["pc_sampling"]["dropped_samples"] = 6000;
        QVERIFY(find(synthesise(telemetryFromRecordedReply(r)), "lines.samples-dropped"));
        // Samples spread evenly: no line stands out.
        for (std::size_t i = 0; i < r["pc_sampling"]["pcs"].size(); ++i) {
            r["pc_sampling"]["pcs"][i]["line"] = 20 + i;
            r["pc_sampling"]["pcs"][i]["stalls"] = { { "wait", 100 } };
        }
        QVERIFY(!find(synthesise(telemetryFromRecordedReply(r)), "lines.hot-line"));
        r["pc_sampling"] = { { "status", "unavailable" }, { "reason", "insufficient-privileges" } };
        QVERIFY(!find(synthesise(telemetryFromRecordedReply(r)), "lines.hot-line"));
    }

    void refusesAMalformedValue()
    {
        nlohmann::json r = reply("lines/pointer_chase-lines-h200.json");
        r["pc_sampling"]["pcs"] = "many";
        try {
            telemetryFromRecordedReply(r);
            QFAIL("accepted");
        } catch (const Error& error) {
            QCOMPARE(QString::fromStdString(error.category()), QStringLiteral("findings.bad-telemetry"));
        }
    }

    void repliesWithoutSamplesAreUnchanged()
    {
        const Telemetry t = telemetryFromRecordedReply(reply("findings/layernorm-naive-stalls-h200.json"));
        QVERIFY(!t.lineSamples); // "pc_sampling": null
        for (const Finding& f : synthesise(t))
            QVERIFY(!f.id.starts_with("lines."));
    }
};

QTEST_GUILESS_MAIN(TestLinesFindings)
#include "test_lines_findings.moc"
