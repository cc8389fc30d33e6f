// The reviewer's core: source diffs (dtl), the changes header, the best iteration, the exported
// kernel, and per-size figures in `show`, `history` and `export-kernel` (issue 12, honest numbers).
#include "core/report/candidate_changes.h"
#include "core/report/kernel_export.h"
#include "core/report/size_figures.h"
#include "core/report/source_diff.h"
#include "core/report/static_severity.h"
#include "core/store/store.h"

#include "store_fixtures.h"

#include <QProcess>

#include <QTemporaryDir>
#include <QtTest/QTest>
#include <algorithm>
#include <cmath>

using namespace kl;
using namespace kl::report;

namespace {

const std::string kBefore = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
const std::string kAfter = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n"; // line 2 changed, line 13 added

// A passed result timed at two main sizes whose percentiles differ widely (a 72 us and an 85 us size).
store::ResultRecord twoSizeResult()
{
    auto r = store::fixtures::passedResult(1);
    r.medianUs = 72.13; // the loop stores the first size's figures in the summary columns
    r.p20Us = 72.0;
    r.p80Us = 72.3;
    r.speedup = std::sqrt(1.5 * 1.2);
    const auto timed
        = [](std::string label, double median, double p20, double p80, double gbps, double pct, double speedup) {
              protocol::CaseTiming c;
              c.label = std::move(label);
              c.candidate.medianUs = median;
              c.candidate.p20Us = p20;
              c.candidate.p80Us = p80;
              c.candidate.minUs = median;
              c.candidate.meanUs = median;
              c.gbps = gbps;
              c.pctOfCopy = pct;
              c.speedupVsBaseline = speedup;
              return c;
          };
    const auto small = timed("M=4096,N=1024", 72.13, 72.0, 72.3, 1599.0, 37.4, 1.5);
    const auto large = timed("M=8192,N=4096", 84.80, 84.12, 85.49, 3100.0, 74.1, 1.2);
    r.timing = protocol::Timing { 1980.0, std::nullopt, {}, { small, large } };
    return r;
}

struct Session {
    std::int64_t id = 0;
};

// A session: the baseline (1), a faster passed candidate (2), the fastest passed one (3) and a failure (4).
// `problem`: the problem it is of (store::fixtures::problem() by default).
Session fillSession(
    store::Store& s, bool withSummary, bool twoSizes, const store::ProblemRecord& problem = store::fixtures::problem())
{
    const auto hash = s.addProblem(problem);
    store::SessionRecord rec;
    rec.problemHash = hash;
    rec.device = "NVIDIA H200 #0";
    rec.proposer = "tuner";
    const auto id = s.createSession(rec);
    std::optional<std::int64_t> parent;
    const double speedups[] = { 1.0, 1.4, 1.6 };
    for (int i = 0; i < 4; ++i) {
        auto c = store::fixtures::candidate(i, parent);
        c.tunables = { { "THREADS", 128 << i } };
        const auto cid = s.addCandidate(id, c);
        const auto ref = s.beginIteration(id, cid, i);
        auto r = i == 3 ? store::fixtures::failedResult(i)
            : twoSizes  ? twoSizeResult()
                        : store::fixtures::passedResult(i);
        if (i < 3)
            r.speedup = speedups[i];
        s.recordResult(ref, r);
        s.finishIteration(ref);
        parent = cid;
    }
    if (withSummary) {
        store::SessionSummary summary;
        summary.stopReason = "budget";
        summary.bestIteration = 2;
        s.recordSessionSummary(id, summary);
    }
    return { id };
}

struct Run {
    int exitCode = -1;
    QString out;
};

Run cli(const QStringList& arguments)
{
    QProcess p;
    p.start(QStringLiteral(KL_CLI_PATH), arguments);
    Run r;
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput()) + QString::fromUtf8(p.readAllStandardError());
    return r;
}

} // namespace

class TestReview : public QObject {
    Q_OBJECT

private slots:
    void diffHunksAndLineNumbers()
    {
        const auto d = diffSources(kBefore, kAfter, 3);
        QCOMPARE(d.added, 2);
        QCOMPARE(d.removed, 1);
        QCOMPARE(int(d.hunks.size()), 2); // the changes are 11 lines apart: two hunks with 3 lines of context
        const auto& h = d.hunks.front();
        QCOMPARE(h.beforeStart, 1);
        QCOMPARE(h.beforeCount, 5);
        QCOMPARE(h.afterStart, 1);
        QCOMPARE(h.afterCount, 5);
        QCOMPARE(int(h.lines[1].kind), int(DiffLine::Kind::Removed));
        QCOMPARE(h.lines[1].beforeLine, 2);
        QCOMPARE(h.lines[2].afterLine, 2);
        const auto& tail = d.hunks.back();
        QCOMPARE(tail.afterStart, 10);
        QCOMPARE(tail.lines.back().afterLine, 13);
        QCOMPARE(tail.lines.back().beforeLine, 0);
        QVERIFY(diffSources(kBefore, kBefore).same());
        QCOMPARE(int(diffSources(kBefore, kAfter, 20).hunks.size()), 1); // wide context merges them
    }

    void unifiedText()
    {
        const auto text = unifiedDiff("x\ny\nz\n", "x\nY\nz\n", "parent/a.cu", "this/a.cu");
        QCOMPARE(QString::fromStdString(text),
            QStringLiteral("--- parent/a.cu\n+++ this/a.cu\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"));
        QVERIFY(unifiedDiff("x\n", "x\n", "a", "b").empty());
        // Everything added to an empty file: the before side starts at 0 with no lines.
        QCOMPARE(QString::fromStdString(unifiedDiff("", "p\nq\n", "a", "b")),
            QStringLiteral("--- a\n+++ b\n@@ -0,0 +1,2 @@\n+p\n+q\n"));
    }

    void sideBySideRows()
    {
        const auto rows = sideBySide(diffSources("x\ny\nz\n", "x\nY\nz\nw\n"));
        QCOMPARE(int(rows.size()), 4);
        QCOMPARE(int(rows[1].kind), int(SideBySideRow::Kind::Changed));
        KL_COMPARE_TEXT(rows[1].beforeText, "y");
        KL_COMPARE_TEXT(rows[1].afterText, "Y");
        QCOMPARE(int(rows[3].kind), int(SideBySideRow::Kind::Added));
        QVERIFY(!rows[3].beforeLine);
        QCOMPARE(*rows[3].afterLine, 4);
        const auto text = sideBySideText(diffSources("x\ny\nz\n", "x\nY\nz\nw\n"), 12);
        QVERIFY2(text.find("2    y       | 2    Y") != std::string::npos, text.c_str());
        QVERIFY2(text.find(">") != std::string::npos, text.c_str());
        // Two hunks are separated by a break row.
        const auto two = sideBySide(diffSources(kBefore, kAfter, 1));
        QVERIFY(std::any_of(
            two.begin(), two.end(), [](const auto& r) { return r.kind == SideBySideRow::Kind::HunkBreak; }));
    }

    void changesHeader()
    {
        const std::string before = "// @kl tunable VEC = 4 in 1, 2, 4\n"
                                   "// @kl launch k grid=(cdiv(M, 1)) block=(256) args=(x, y, M)\n"
                                   "__global__ void k() {}\n";
        const std::string after = "// @kl tunable VEC = 4 in 1, 2, 4, 8\n"
                                  "// @kl tunable ROWS = 1 in 1, 2\n"
                                  "// @kl launch k grid=(cdiv(M, ROWS)) block=(256) args=(x, y, M)\n"
                                  "__global__ void k() {}\n";
        const auto c = candidateChanges(before, { { "VEC", 4 } }, after, { { "VEC", 8 }, { "ROWS", 2 } });
        QCOMPARE(int(c.tunables.size()), 2);
        KL_COMPARE_TEXT(c.tunables[0].name, "ROWS");
        QVERIFY(!c.tunables[0].before);
        QCOMPARE(*c.tunables[1].after, std::int64_t(8));
        const auto launches = c.launchRules();
        QCOMPARE(int(launches.size()), 1);
        KL_COMPARE_TEXT(launches[0].name, "k");
        QVERIFY(launches[0].after.find("cdiv(M, ROWS)") != std::string::npos);
        KL_COMPARE_TEXT(c.directives.front().kind, "launch"); // launch rules first
        QCOMPARE(int(c.directives.size()), 3); // the launch, ROWS added, VEC's set changed
        const auto text = changesHeaderText(c);
        QVERIFY2(text.find("tunables: ROWS (unset) -> 2, VEC 4 -> 8\n") == 0, text.c_str());
        QVERIFY2(text.find("tunable added:   tunable ROWS") != std::string::npos, text.c_str());
        QVERIFY(candidateChanges(before, { { "VEC", 4 } }, before, { { "VEC", 4 } }).empty());
    }

    void bestIterationChoice()
    {
        QTemporaryDir dir;
        auto s = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        const auto withSummary = fillSession(s, true, false);
        const auto without = fillSession(s, false, false);
        QCOMPARE(bestIteration(s, withSummary.id).value_or(-1), 2); // the loop's own choice
        QCOMPARE(bestIteration(s, without.id).value_or(-1), 3); // else the highest passed speedup
        // A session where nothing passed has no best, and export says so by category.
        store::SessionRecord rec;
        rec.problemHash = s.addProblem(store::fixtures::problem());
        const auto empty = s.createSession(rec);
        const auto ref = s.beginIteration(empty, s.addCandidate(empty, store::fixtures::candidate(1)), 0);
        s.recordResult(ref, store::fixtures::failedResult(1));
        s.finishIteration(ref);
        QVERIFY(!bestIteration(s, empty));
        KL_COMPARE_TEXT(store::fixtures::errorCategory([&] { exportKernel(s, empty); }), "session.no-best");
        KL_COMPARE_TEXT(
            store::fixtures::errorCategory([&] { exportKernel(s, without.id, 99); }), "store.no-such-iteration");
    }

    void exportedKernelOneSize()
    {
        QTemporaryDir dir;
        auto s = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        const auto session = fillSession(s, false, false);
        const auto e = exportKernel(s, session.id);
        QCOMPARE(e.iteration, 3);
        QVERIFY2(e.text.find("from session " + std::to_string(session.id) + ", iteration 3 (layernorm_gelu)")
                != std::string::npos,
            e.text.c_str());
        QVERIFY2(e.text.find("#ifndef THREADS\n#define THREADS 512\n#endif\n") != std::string::npos, e.text.c_str());
        QVERIFY2(e.text.find("// Median 42.00 us (p20 41.75, p80 42.50)") != std::string::npos, e.text.c_str());
        QVERIFY(e.text.find("geometric mean") == std::string::npos);
        QVERIFY(e.text.find("__global__ void ln_gelu") != std::string::npos);
    }

    // Issue 12: with two main sizes the header gave the first size's median beside percentiles of
    // another figure; now each size has its own line and the aggregate says it is a geometric mean.
    void exportedKernelTwoSizes()
    {
        QTemporaryDir dir;
        auto s = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        const auto session = fillSession(s, true, true);
        const auto e = exportKernel(s, session.id);
        QVERIFY2(
            e.text.find("//   M=4096,N=1024: median 72.13 us (p20 72.00, p80 72.30), 1599 GB/s, 37.4% of copy, 1.50x\n")
                != std::string::npos,
            e.text.c_str());
        QVERIFY2(
            e.text.find("//   M=8192,N=4096: median 84.80 us (p20 84.12, p80 85.49), 3100 GB/s, 74.1% of copy, 1.20x\n")
                != std::string::npos,
            e.text.c_str());
        QVERIFY2(e.text.find("1.40x (geometric mean over 2 main sizes)") != std::string::npos, e.text.c_str());
        QVERIFY2(e.text.find("// Median ") == std::string::npos, e.text.c_str());
    }

    // One classification of the static report for the GUI's table and `check`, from the findings' thresholds.
    void staticSeverities()
    {
        StaticReport::PerLaunch l;
        l.kernel = "k";
        l.sizes.label = "8192x4096";
        l.occupancy.theoretical = 0.375;
        l.waves = 0.5;
        QVERIFY(staticSeverity(l, StaticFigure::Occupancy) == Severity::Warning);
        QVERIFY(staticSeverity(l, StaticFigure::Limiter) == Severity::Warning);
        QVERIFY(staticSeverity(l, StaticFigure::Waves) == Severity::Warning);
        QVERIFY(staticSeverity(l, StaticFigure::SpillStores) == Severity::None);
        FindingThresholds strict;
        strict.occupancyCritical = 0.40;
        QVERIFY(staticSeverity(l, StaticFigure::Occupancy, strict) == Severity::Critical);
        l.resources.spillStoreBytes = 64;
        const auto lines = staticSeverityLines(l);
        QVERIFY(!lines.empty());
        KL_COMPARE_TEXT(lines.front(), "critical: k at 8192x4096: 64 B of spill stores");
        QVERIFY(std::any_of(lines.begin(), lines.end(), [](const std::string& x) {
            return x.rfind("warning: k at 8192x4096: theoretical occupancy 37.5 %", 0) == 0;
        }));
        l.occupancy.error = "too much shared memory";
        QVERIFY(staticSeverity(l, StaticFigure::Occupancy) == Severity::Critical);
        QVERIFY(staticSeverity(l, StaticFigure::Limiter) == Severity::None);
    }

    void cliShowHistoryAndExportPerSize()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        {
            auto s = store::Store::open(db.toStdString());
            fillSession(s, true, true);
        }
        const auto show = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--db"), db });
        QCOMPARE(show.exitCode, 0);
        QVERIFY2(
            show.out.contains(QStringLiteral(
                "timing:     M=8192,N=4096: median 84.80 us (p20 84.12, p80 85.49), 3100 GB/s, 74.1% of copy, 1.20x")),
            qPrintable(show.out));
        QVERIFY2(show.out.contains(QStringLiteral("(geometric mean over 2 main sizes)")), qPrintable(show.out));
        QVERIFY2(!show.out.contains(QStringLiteral("timing:     median")), qPrintable(show.out));
        // The diff to its parent has the changes header (tunables) and the unified text.
        QVERIFY2(show.out.contains(QStringLiteral("tunables: THREADS 128 -> 256")), qPrintable(show.out));
        QVERIFY2(show.out.contains(QStringLiteral("--- parent/candidate.cu")), qPrintable(show.out));
        const auto side = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--side-by-side"),
            QStringLiteral("--db"), db });
        QVERIFY2(side.out.contains(QStringLiteral(" | ")) && !side.out.contains(QStringLiteral("+++ ")),
            qPrintable(side.out));

        const auto history = cli({ QStringLiteral("history"), QStringLiteral("--db"), db });
        QCOMPARE(history.exitCode, 0);
        QVERIFY2(history.out.contains(QStringLiteral("       M=4096,N=1024: median 72.13 us (p20 72.00, p80 72.30)")),
            qPrintable(history.out));
        QVERIFY2(history.out.contains(QStringLiteral("geomean")), qPrintable(history.out));

        const auto kernel = cli({ QStringLiteral("export-kernel"), QStringLiteral("--db"), db });
        QCOMPARE(kernel.exitCode, 0);
        QVERIFY2(kernel.out.contains(QStringLiteral("iteration 2 (layernorm_gelu)")), qPrintable(kernel.out));
        QVERIFY2(kernel.out.contains(QStringLiteral("//   M=8192,N=4096: median 84.80 us")), qPrintable(kernel.out));
        QVERIFY2(kernel.out.contains(QStringLiteral("at its main, fuzz and padded sizes")), qPrintable(kernel.out));
        QVERIFY2(!history.out.contains(QStringLiteral("fixed sizes")), qPrintable(history.out));
    }

    // Issue 39: a problem verified at its main sizes only ("sizes.fixed", an imported KernelBench problem
    // no size rule holds for) says so, and why, in `history` and in export-kernel's header.
    void fixedSizesInHistoryAndExport()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        const std::string why = "imported at KernelBench's sizes only: batch_size = 32768 only";
        {
            auto s = store::Store::open(db.toStdString());
            auto problem = store::fixtures::problem("hinge_loss");
            problem.json = "{\"name\":\"hinge_loss\",\"sizes\":{\"symbols\":[\"batch_size\"],"
                           "\"main\":[{\"batch_size\":32768}],\"fixed\":\""
                + why + "\"}}";
            fillSession(s, true, false, problem);
        }
        const auto history = cli({ QStringLiteral("history"), QStringLiteral("--db"), db });
        QCOMPARE(history.exitCode, 0);
        QVERIFY2(history.out.contains(QString::fromStdString("fixed sizes: " + why)), qPrintable(history.out));
        const auto kernel = cli({ QStringLiteral("export-kernel"), QStringLiteral("--db"), db });
        QCOMPARE(kernel.exitCode, 0);
        QVERIFY2(kernel.out.contains(QString::fromStdString(
                     "// Verified against the problem's reference at its main sizes only (fixed sizes: " + why + ")")),
            qPrintable(kernel.out));
        QVERIFY2(!kernel.out.contains(QStringLiteral("fuzz and padded")), qPrintable(kernel.out));
    }
};

QTEST_GUILESS_MAIN(TestReview)
#include "test_review.moc"
