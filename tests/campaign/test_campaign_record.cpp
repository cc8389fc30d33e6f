// The campaign record (core/store/campaign_store.h) and the report's maths (core/campaign): what a
// resume runs again and what it keeps; fast_p as KernelBench counts it (failures are not fast, the
// threshold is strict) and geometric means over the problems where the contender was timed.
#include "core/campaign/campaign_report.h"
#include "core/campaign/campaign_scheduler.h"
#include "core/campaign/report_export.h"
#include "core/model/error.h"
#include "core/store/campaign_store.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

using namespace kl;

namespace {

campaign::ProblemRow row(const std::string& status, std::optional<double> eager, std::optional<double> compile)
{
    campaign::ProblemRow r;
    r.name = "p";
    r.status = status;
    r.vsEager = eager;
    r.vsCompile = compile;
    r.speedup = eager;
    return r;
}

} // namespace

class TestCampaignRecord : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void resumeRunsAgainOnlyWhatDidNotFinish()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(QStringLiteral("s.db")).toStdString();
        auto record = store::CampaignStore::open(path);
        const auto id = record.create("c", "kernelloop-cli tune PROBLEM", { "a", "b", "c", "d", "e" });
        try {
            record.create("c", "x", { "a" });
            QFAIL("a second campaign of one name");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), u"store.campaign-exists"_qs);
        }
        for (int i = 0; i < 5; ++i)
            record.startProblem(id, i, "local:0");
        record.finishProblem(id, 0, "done", "", "", std::nullopt);
        record.finishProblem(id, 1, "failed", "compile.syntax", "expected a ;", std::nullopt);
        record.finishProblem(id, 2, "failed", "runner.lost", "killed", std::nullopt);
        record.finishProblem(id, 3, "failed", "cancelled", "stopped", std::nullopt);
        // 4 stays running: its process died.
        QCOMPARE(record.resume(id), 3);
        const auto rows = record.problems(id);
        QCOMPARE(QString::fromStdString(rows[0].status), u"done"_qs);
        QCOMPARE(QString::fromStdString(rows[1].status), u"failed"_qs);
        QCOMPARE(QString::fromStdString(rows[1].category), u"compile.syntax"_qs);
        for (int i : { 2, 3, 4 })
            QCOMPARE(QString::fromStdString(rows[i].status), u"pending"_qs);
        QCOMPARE(rows[4].attempts, 1);
        QCOMPARE(QString::fromStdString(record.campaign(id)->status), u"running"_qs);
        record.finish(id, "finished");
        QCOMPARE(QString::fromStdString(record.campaignNamed("c")->status), u"finished"_qs);

        // Read-only, the same rows; a file from before campaigns reads as having none.
        const auto reading = store::CampaignStore::open(path, { .readOnly = true });
        QCOMPARE(int(reading.problems(id).size()), 5);
        QCOMPARE(int(reading.list().size()), 1);
    }

    // The scheduler alone, over a scripted RunProblem: runner "b" loses every job (runner.lost), so its
    // problems are handed to "a" and "b" is given up after two; a thrown error is the problem's row; a
    // session that ran is linked as soon as it starts.
    void schedulerHandsBackAndGivesUp()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(QStringLiteral("s.db")).toStdString();
        std::int64_t id = 0;
        {
            auto record = store::CampaignStore::open(path);
            id = record.create("s", "kernelloop-cli tune PROBLEM", { "p0", "p1", "p2", "p3", "p4" });
        }
        std::mutex mutex;
        std::map<std::string, std::vector<std::string>> ranOn; // endpoint -> problems
        const campaign::RunProblem run
            = [&](const campaign::ProblemJob& job, const std::function<void(std::int64_t)>&, std::atomic<bool>*) {
                  {
                      std::lock_guard lock(mutex);
                      ranOn[job.endpoint].push_back(job.recipe.problem);
                  }
                  QTest::qSleep(20); // so that both runners take problems
                  if (job.recipe.runners != std::vector<std::string> { job.endpoint })
                      throw Error("test.bad-job", {}, {}, "the job's runners are not its endpoint");
                  if (job.endpoint == "b")
                      return campaign::ProblemOutcome { 0, "failed", "runner.lost", "killed by signal 9" };
                  if (job.recipe.problem == "p3")
                      throw Error("kernelbench.random-ops", job.recipe.problem, {}, "forward draws random numbers");
                  return campaign::ProblemOutcome { 0, "done", "", "" };
              };
        session::SessionRecipe recipe;
        campaign::CampaignScheduler scheduler(path, id, recipe, { "a", "b" }, run);
        QCOMPARE(QString::fromStdString(scheduler.run()), u"finished"_qs);
        const auto rows = store::CampaignStore::open(path, { .readOnly = true }).problems(id);
        for (const auto& r : rows) {
            QCOMPARE(QString::fromStdString(r.endpoint), u"a"_qs);
            if (r.problem == "p3") {
                QCOMPARE(QString::fromStdString(r.status), u"failed"_qs);
                QCOMPARE(QString::fromStdString(r.category), u"kernelbench.random-ops"_qs);
            } else {
                QVERIFY2(r.status == "done", (r.problem + " " + r.status + " " + r.category).c_str());
            }
        }
        QVERIFY(ranOn["b"].size() <= 2); // given up after two faults in a row
        QCOMPARE(int(ranOn["a"].size()), 5);
    }

    // Fewer problems than runners: the runners are shared out, and a session gets several.
    void spareRunnersAreShared()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(QStringLiteral("s.db")).toStdString();
        std::int64_t id = 0;
        {
            auto record = store::CampaignStore::open(path);
            id = record.create("s", "kernelloop-cli tune PROBLEM", { "p0", "p1" });
        }
        std::mutex mutex;
        std::condition_variable bothStarted;
        std::map<std::string, std::vector<std::string>> runners; // problem -> its runners
        // A session lasts minutes: each job waits (up to 10 s) for the other to start, so that one worker
        // finishing its problem at once cannot take the second one too (a race, not sharing).
        const campaign::RunProblem run
            = [&](const campaign::ProblemJob& job, const std::function<void(std::int64_t)>&, std::atomic<bool>*) {
                  std::unique_lock lock(mutex);
                  runners[job.recipe.problem] = job.recipe.runners;
                  bothStarted.notify_all();
                  bothStarted.wait_for(lock, std::chrono::seconds(10), [&] { return runners.size() == 2; });
                  return campaign::ProblemOutcome { 0, "done", "", "" };
              };
        campaign::CampaignScheduler scheduler(
            path, id, session::SessionRecipe {}, { "local:0", "local:1", "local:2", "local:3", "local:4" }, run);
        QCOMPARE(QString::fromStdString(scheduler.run()), u"finished"_qs);
        std::multiset<std::size_t> sizes;
        std::set<std::string> all;
        for (const auto& [problem, list] : runners) {
            sizes.insert(list.size());
            all.insert(list.begin(), list.end());
        }
        QCOMPARE(int(runners.size()), 2);
        QVERIFY(sizes == (std::multiset<std::size_t> { 2, 3 }));
        QCOMPARE(int(all.size()), 5); // every runner in use, none twice
        const auto rows = store::CampaignStore::open(path, { .readOnly = true }).problems(id);
        QVERIFY2(rows[0].endpoint.find('+') != std::string::npos, rows[0].endpoint.c_str());
    }

    void fastPCountsEveryProblem()
    {
        const std::vector<campaign::ProblemRow> rows { row("done", 1.5, 1.3), row("done", 1.2, 1.0),
            row("done", 0.8, std::nullopt), row("failed", std::nullopt, std::nullopt), row("done", 2.0, 1.21) };
        const auto f = campaign::campaignFigures(rows);
        QCOMPARE(f.problems, 5);
        QCOMPARE(f.done, 4);
        QCOMPARE(f.failed, 1);
        // > 1.0: 1.5, 1.2, 2.0 of eager; 1.3, 1.21 of torch.compile (1.0 is not faster).
        QCOMPARE(f.fastEager1.fast, 3);
        QCOMPARE(f.fastEager1.of, 5);
        QCOMPARE(f.fastCompile1.fast, 2);
        // > 1.2 strictly: 1.5, 2.0 (1.2 is not); 1.3, 1.21.
        QCOMPARE(f.fastEager12.fast, 2);
        QCOMPARE(f.fastCompile12.fast, 2);
        QVERIFY(std::abs(f.fastEager12.share() - 0.4) < 1e-12);
        QCOMPARE(f.withEager, 4);
        QVERIFY(std::abs(*f.geomeanVsEager - std::pow(1.5 * 1.2 * 0.8 * 2.0, 0.25)) < 1e-12);
        QCOMPARE(f.withCompile, 3);
        QVERIFY(std::abs(*f.geomeanVsCompile - std::cbrt(1.3 * 1.0 * 1.21)) < 1e-12);
    }

    void exportsSayTheSameFigures()
    {
        campaign::CampaignReport report;
        report.campaign.name = "c";
        report.campaign.status = "finished";
        report.rows = { row("done", 1.5, 1.3), row("failed", std::nullopt, std::nullopt) };
        report.rows[0].sessionId = 4;
        report.rows[0].bestIteration = 3;
        report.rows[1].name = "q,r";
        report.rows[1].category = "wrong-result";
        report.rows[1].detail = "max abs error 1.5";
        report.figures = campaign::campaignFigures(report.rows);
        const auto markdown = QString::fromStdString(campaign::reportMarkdown(report));
        QVERIFY2(markdown.contains(u"| fast_1.0 | 1/2 (50.0%) | 1/2 (50.0%) |"_qs), qPrintable(markdown));
        QVERIFY2(markdown.contains(u"session 4, iteration 3"_qs), qPrintable(markdown));
        QVERIFY2(markdown.contains(u"failed: wrong-result"_qs), qPrintable(markdown));
        const auto csv = QString::fromStdString(campaign::reportCsv(report));
        QVERIFY2(csv.contains(u"\"q,r\",failed,wrong-result"_qs), qPrintable(csv));
        const auto json = campaign::reportJson(report);
        QCOMPARE(json["figures"]["fast_1.2_vs_torch_compile"]["fast"].get<int>(), 1);
        QCOMPARE(json["problems"][0]["vs_eager"].get<double>(), 1.5);
        QVERIFY(json["problems"][1]["vs_eager"].is_null());
        const auto svg = QString::fromStdString(campaign::distributionSvg(report));
        QVERIFY(svg.startsWith(u"<svg"_qs));
        QVERIFY2(svg.contains(u"1.30x (session 4, iteration 3)"_qs), qPrintable(svg));
        QVERIFY(svg.contains(u"q,r: failed: wrong-result"_qs));
        // Every attribute has a value: an empty one (stroke-dasharray="") makes ImageMagick refuse the picture.
        QVERIFY2(!svg.contains(u"=\"\""_qs), qPrintable(svg));
    }
};

QTEST_GUILESS_MAIN(TestCampaignRecord)
#include "test_campaign_record.moc"
