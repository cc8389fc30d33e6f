// The bundled session recorded on the H200 with --metrics deep (scripts/gpu-deep-session.sh): what makes
// the stall chart, the Lines tab and source|SASS show real data out of the box (issue 28). Every
// iteration carries the stall reasons of its profile and either PC samples mapped to lines of its own
// source or a categorised reason why CUPTI took none; the file stays importable as it was recorded.
#include "core/findings/stall_reasons.h"
#include "core/store/store.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <algorithm>
#include <set>

using namespace kl::store;

namespace {

const std::filesystem::path kDeep
    = std::filesystem::path(KL_SOURCE_DIR) / "resources/sessions/layernorm_gelu-deep-h200.klsession";

int lineCount(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')) + 1; }

} // namespace

class BundledDeepSessionTest : public QObject {
    Q_OBJECT

private slots:
    void everyIterationHasStallsAndLines()
    {
        QVERIFY2(std::filesystem::is_regular_file(kDeep), kDeep.c_str());
        QTemporaryDir dir;
        auto store = Store::open(dir.filePath(QStringLiteral("deep.db")).toStdString());
        const auto session = store.importSession(kDeep);
        const auto rows = store.listIterations(session);
        QVERIFY(rows.size() >= 8);
        int sampled = 0;
        for (const auto& row : rows) {
            const auto detail = store.iteration(session, row.index);
            QVERIFY(detail && detail->result && detail->candidate);
            const auto& result = *detail->result;
            QCOMPARE(result.category, std::string("passed"));
            // Stall reasons: each of sm_90's stalls as a profiled metric of the main kernel.
            std::set<std::string> stalls;
            for (const auto& [key, value] : result.metrics)
                for (const auto& reason : kl::stallReasons())
                    if (key.metric == "smsp__average_warps_issue_stalled_" + reason.name + "_per_issue_active.ratio")
                        stalls.insert(reason.name);
            QVERIFY2(stalls.count("long_scoreboard") && stalls.count("not_selected") && stalls.size() >= 15,
                (std::to_string(row.index) + ": " + std::to_string(stalls.size()) + " stall reasons").c_str());
            // PC sampling was asked of every candidate: samples on the candidate's own lines, or why none.
            QVERIFY2(result.pcSampling.has_value(), std::to_string(row.index).c_str());
            const auto& sampling = *result.pcSampling;
            if (sampling.status == kl::lines::SamplingStatus::Unavailable) {
                QVERIFY(!sampling.reason.empty());
                continue;
            }
            QCOMPARE(sampling.status, kl::lines::SamplingStatus::Ok);
            QVERIFY(sampling.sampledInCandidate() > 0);
            const int lines = lineCount(detail->candidate->source);
            for (const auto& pc : sampling.pcs)
                QVERIFY(pc.line >= 0 && pc.line <= lines);
            QVERIFY(std::any_of(sampling.pcs.begin(), sampling.pcs.end(), [](const auto& pc) { return pc.line > 0; }));
            ++sampled;
        }
        QVERIFY2(sampled * 4 >= int(rows.size()) * 3, (std::to_string(sampled) + " sampled").c_str());
    }
};

QTEST_GUILESS_MAIN(BundledDeepSessionTest)
#include "test_bundled_deep_session.moc"
