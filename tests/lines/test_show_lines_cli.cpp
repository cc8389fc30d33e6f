// `kernelloop-cli show N --lines` as a user runs it, on a real store: the stored PC samples of the
// planted pointer_chase kernel summed per line with the line's source text and its warp states; a
// clear line for an iteration that was not sampled; a damaged stored value is a categorised error.
// The header says what the sampling phase cost. `tune --metrics lines` stores samples for every
// iteration, and the GPU check's table gives the phase's ms per candidate.
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "store_fixtures.h"
#include "tests/test_files.h"

#include <QDir>
#include <QFile>
#include <QMap>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <sqlite3.h>

using namespace kl::store;
namespace fx = kl::store::fixtures;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

// `workingDirectory`: where the CLI runs (empty: here).
Run cli(
    const QStringList& arguments, const QMap<QString, QString>& variables = {}, const QString& workingDirectory = {})
{
    QProcess process;
    if (!workingDirectory.isEmpty())
        process.setWorkingDirectory(workingDirectory);
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("KERNELLOOP_DB"));
    for (auto it = variables.begin(); it != variables.end(); ++it)
        environment.insert(it.key(), it.value());
    process.setProcessEnvironment(environment);
    process.start(QStringLiteral(KL_CLI_PATH), arguments);
    Run run;
    if (!process.waitForFinished(20000)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

// A file of the source tree: under kl::test::sourceDir(), the checkout the suite runs in.
QString sourcePath(const QString& relative) { return QString::fromStdString(kl::test::sourceDir()) + u'/' + relative; }

} // namespace

class TestShowLinesCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_store;

private slots:
    void initTestCase()
    {
        m_store = m_dir.filePath(QStringLiteral("lines.db"));
        auto store = Store::open(m_store.toStdString());
        SessionRecord record;
        record.problemHash = store.addProblem(fx::problem("pointer_chase"));
        record.device = "NVIDIA H200 #0";
        record.proposer = "human";
        const auto session = store.createSession(record);
        auto candidate = fx::candidate(1);
        candidate.source = kl::test::sourceText("tests/gpu/lines/pointer_chase/baseline.cu");
        candidate.fileName = "baseline.cu";
        // The runner's replies recorded on the H200 (tests/fixtures/lines/README.md).
        const auto reply
            = nlohmann::json::parse(kl::test::sourceText("tests/fixtures/lines/pointer_chase-lines-h200.json"));
        // Iteration 1 sampled, iteration 2 timed without sampling.
        for (int i = 0; i < 2; ++i) {
            const auto ref = store.beginIteration(session, store.addCandidate(session, candidate));
            store.recordResult(ref,
                i == 0 ? resultFromEvaluateResult(reply.get<kl::protocol::EvaluateResult>()) : fx::passedResult(2));
            store.finishIteration(ref);
        }
        // Iteration 3: the planted bank conflict, sampled.
        auto conflict = fx::candidate(3);
        conflict.source = kl::test::sourceText("tests/gpu/lines/bank_conflict/baseline.cu");
        conflict.fileName = "baseline.cu";
        const auto ref = store.beginIteration(session, store.addCandidate(session, conflict));
        store.recordResult(ref,
            resultFromEvaluateResult(
                nlohmann::json::parse(kl::test::sourceText("tests/fixtures/lines/bank_conflict-lines-h200.json"))
                    .get<kl::protocol::EvaluateResult>()));
        store.finishIteration(ref);
        store.finishSession(session, "finished");
    }

    void showsTheHottestLinesWithTheirSourceAndStalls()
    {
        const auto run = cli({ QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--lines"),
            QStringLiteral("--db"), m_store });
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.startsWith(QStringLiteral("session 1, iteration 1 (done)\n")), qPrintable(run.out));
        // The header: the samples in the candidate, then the sampling phase's cost and CUPTI's counts.
        const auto lines = run.out.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() > 4, qPrintable(run.out));
        QCOMPARE(
            lines[1], QStringLiteral("18032 samples in the candidate at 64Mx256k, one per 2^12 cycles, 0 dropped"));
        QCOMPARE(lines[2],
            QStringLiteral(
                "sampling phase: 976.9 ms, 1 run; CUPTI counted 18032 samples (0 in other kernels, 0 dropped)"));
        // The planted loop is first, long_scoreboard dominant, with its own source text under it.
        QVERIFY2(lines[3].startsWith(QStringLiteral("     11  ")), qPrintable(run.out));
        QVERIFY2(lines[3].contains(QStringLiteral("long_scoreboard")), qPrintable(lines[3]));
        QVERIFY2(lines[4].contains(QStringLiteral("for (int k = 0; k < 64; ++k) j = (unsigned)next[j] % (unsigned)n;")),
            qPrintable(lines[4]));
        // Only the lines: no findings, no source listing.
        QVERIFY(!run.out.contains(QStringLiteral("finding [")));
        QVERIFY(!run.out.contains(QStringLiteral("extern \"C\"")));
    }

    void showsTheBankConflictLine()
    {
        const auto run = cli({ QStringLiteral("show"), QStringLiteral("3"), QStringLiteral("--lines"),
            QStringLiteral("--db"), m_store });
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        const auto lines = run.out.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() > 3, qPrintable(run.out));
        QVERIFY2(
            lines[1].startsWith(QStringLiteral("33206 samples in the candidate at 2048x8192")), qPrintable(run.out));
        QCOMPARE(lines[2],
            QStringLiteral(
                "sampling phase: 434.4 ms, 1 run; CUPTI counted 33206 samples (0 in other kernels, 0 dropped)"));
        QVERIFY2(lines[3].startsWith(QStringLiteral("     19   97.4%  short_scoreboard 98%")), qPrintable(run.out));
    }

    void anUnsampledIterationSaysHowToSample()
    {
        const auto run = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--lines"),
            QStringLiteral("--db"), m_store });
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QCOMPARE(run.out,
            QStringLiteral(
                "session 1, iteration 2 (done)\nno PC sampling for this iteration; run with --metrics lines\n"
                "code: no PTX or SASS stored for this iteration (measured before KernelLoop kept them, or "
                "it did not compile)\n"));
    }

    // `evaluate --metrics lines` through the real loop (real NVRTC, the runner double answering with the
    // H200 samples): `show --lines` then says which machine code the iteration keeps. Without nvdisasm
    // (this machine) the PTX; with one (an nvdisasm stand-in printing the H200 listing) the SASS too.
    void evaluateKeepsTheCandidatesCode_data()
    {
        QTest::addColumn<QString>("nvdisasm");
        QTest::addColumn<QString>("code");
        QTest::newRow("no nvdisasm") << QStringLiteral("off") << QStringLiteral("code: PTX only (3.1 KB) stored (");
        QTest::newRow("nvdisasm") << QStringLiteral("stand-in")
                                  << QStringLiteral("code: SASS (nvdisasm -g, 13.8 KB) and PTX (3.1 KB) stored (");
    }
    void evaluateKeepsTheCandidatesCode()
    {
        QFETCH(QString, nvdisasm);
        QFETCH(QString, code);
        if (nvdisasm == QStringLiteral("stand-in")) {
            nvdisasm = m_dir.filePath(QStringLiteral("nvdisasm"));
            QFile tool(nvdisasm);
            QVERIFY(tool.open(QIODevice::WriteOnly));
            tool.write("#!/bin/sh\n[ \"$1\" = -g ] && [ -s \"$2\" ] || exit 3\ncat '"
                + sourcePath(QStringLiteral("tests/fixtures/lines/pointer_chase.nvdisasm.txt")).toUtf8() + "'\n");
            tool.close();
            tool.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        }
        const QString db
            = m_dir.filePath(QStringLiteral("evaluated-%1.db")
                                 .arg(QString::fromLatin1(QTest::currentDataTag()).remove(QLatin1Char(' '))));
        const QString problem = sourcePath(QStringLiteral("tests/gpu/lines/pointer_chase"));
        const auto evaluated
            = cli({ QStringLiteral("evaluate"), problem + QStringLiteral("/problem.json"),
                      problem + QStringLiteral("/baseline.cu"), QStringLiteral("--db"), db, QStringLiteral("--runner"),
                      QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"), QStringLiteral("lines"),
                      QStringLiteral("--no-cache") },
                { { QStringLiteral("KL_NVDISASM"), nvdisasm },
                    { QStringLiteral("KL_MODEL_RUNNER_PC_SAMPLING"),
                        sourcePath(QStringLiteral("tests/fixtures/lines/pointer_chase-lines-h200.json")) },
                    // NVRTC names the source in the PTX by the compiling process's folder: compiled in "/"
                    // (the same on every machine; nothing is written there) and never reused from a compile
                    // elsewhere, neither the checkout's path nor $TMPDIR (of any length) can change the
                    // sizes compared below. The temporary folder did: a longer one gave 3.2 KB for 3.1.
                    { QStringLiteral("KERNELLOOP_COMPILE_CACHE"), QStringLiteral("off") } },
                QDir::rootPath());
        QVERIFY2(evaluated.exitCode == 0, qPrintable(evaluated.out + evaluated.err));
        for (const auto& index : { QStringLiteral("1"), QStringLiteral("2") }) { // the baseline, the candidate
            const auto run
                = cli({ QStringLiteral("show"), index, QStringLiteral("--lines"), QStringLiteral("--db"), db });
            QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
            QVERIFY2(run.out.contains(QStringLiteral("\n     11   99.9%  long_scoreboard")), qPrintable(run.out));
            QVERIFY2(run.out.contains(QLatin1Char('\n') + code), qPrintable(run.out));
            if (nvdisasm == QStringLiteral("off"))
                QVERIFY2(run.out.contains(QStringLiteral(", no SASS: nvdisasm not found")), qPrintable(run.out));
        }
    }

    // `tune --metrics lines` through the real loop (real NVRTC, the built-in tuner over the bundled
    // example's tunables, the runner double answering each sampled job with the H200 recording of that
    // example): every stored iteration carries its line samples, and `show N --lines` prints them.
    void tuneSamplesEveryIteration()
    {
        const QString db = m_dir.filePath(QStringLiteral("tuned.db"));
        const QString example = sourcePath(QStringLiteral("resources/examples/layernorm_gelu"));
        const auto tuned
            = cli({ QStringLiteral("tune"), example + QStringLiteral("/problem.json"), QStringLiteral("--db"), db,
                      QStringLiteral("--runner"), QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"),
                      QStringLiteral("lines"), QStringLiteral("--budget"), QStringLiteral("1"), QStringLiteral("-k"),
                      QStringLiteral("2"), QStringLiteral("--no-cache") },
                { { QStringLiteral("KL_MODEL_RUNNER_PC_SAMPLING"),
                    sourcePath(QStringLiteral("tests/fixtures/lines/layernorm_gelu-deep-h200.json")) } });
        QVERIFY2(tuned.exitCode == 0, qPrintable(tuned.out + tuned.err));
        int last = 0;
        {
            const auto store = Store::open(db.toStdString(), { .readOnly = true });
            const auto sessions = store.listSessions();
            QCOMPARE(sessions.size(), std::size_t(1));
            const auto id = sessions.front().session.id;
            const auto rows = store.listIterations(id);
            QVERIFY2(rows.size() >= 3, qPrintable(tuned.out)); // the baseline and two candidates
            for (const auto& row : rows) {
                const auto detail = store.iteration(id, row.index);
                QVERIFY(detail && detail->result);
                const auto& sampling = detail->result->pcSampling;
                QVERIFY2(sampling && sampling->status == kl::lines::SamplingStatus::Ok,
                    qPrintable(QString::number(row.index)));
                QCOMPARE(sampling->totalSamples, std::int64_t(21987));
                QCOMPARE(sampling->pcs.size(), std::size_t(460));
                last = row.index;
            }
        }
        const auto run = cli(
            { QStringLiteral("show"), QString::number(last), QStringLiteral("--lines"), QStringLiteral("--db"), db });
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        const auto lines = run.out.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() > 6, qPrintable(run.out));
        QCOMPARE(
            lines[1], QStringLiteral("21987 samples in the candidate at 8192x4096, one per 2^12 cycles, 0 dropped"));
        QCOMPARE(lines[2],
            QStringLiteral(
                "sampling phase: 441.7 ms, 5 runs; CUPTI counted 21987 samples (0 in other kernels, 0 dropped)"));
        QCOMPARE(lines[3], QStringLiteral("    101   16.2%  long_scoreboard 46%, not_selected 40%, dispatch_stall 6%"));
        QCOMPARE(lines[4], QStringLiteral("         sum += __half2float(t.h[e]);"));
        QVERIFY2(lines[5].startsWith(QStringLiteral("     47   13.1%  wait 31%")), qPrintable(run.out));
    }

    // The GPU check's table (bench/gpu/summarize.py, as scripts/gpu-check.sh runs it) on a work folder
    // laid out as the check leaves it: its `evaluate --metrics lines --json` step (here through the
    // runner double answering with the H200 samples) and test_gpu_lines' log recorded on the H200.
    void gpuCheckTableHasThePcSamplingPhase()
    {
        QTemporaryDir work;
        QVERIFY(QDir(work.path()).mkpath(QStringLiteral("multisize")));
        const QString problem = sourcePath(QStringLiteral("tests/gpu/lines/pointer_chase"));
        const auto evaluated
            = cli({ QStringLiteral("evaluate"), problem + QStringLiteral("/problem.json"),
                      problem + QStringLiteral("/baseline.cu"), QStringLiteral("--db"),
                      work.filePath(QStringLiteral("multisize/lines.db")), QStringLiteral("--runner"),
                      QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"), QStringLiteral("lines"),
                      QStringLiteral("--json"), QStringLiteral("--no-cache") },
                { { QStringLiteral("KL_MODEL_RUNNER_PC_SAMPLING"),
                    sourcePath(QStringLiteral("tests/fixtures/lines/pointer_chase-lines-h200.json")) } });
        QVERIFY2(evaluated.exitCode == 0, qPrintable(evaluated.out + evaluated.err));
        QFile jsonl(work.filePath(QStringLiteral("multisize/lines-evaluate.jsonl")));
        QVERIFY(jsonl.open(QIODevice::WriteOnly));
        jsonl.write(evaluated.out.toUtf8());
        jsonl.close();
        QVERIFY(QFile::copy(sourcePath(QStringLiteral("tests/fixtures/lines/test_gpu_lines-h200.log")),
            work.filePath(QStringLiteral("test_gpu_lines.log"))));

        QProcess python;
        python.start(QStringLiteral("python3"),
            { sourcePath(QStringLiteral("bench/gpu/summarize.py")), work.path(), QStringLiteral("2026-12-01T00:00Z"),
                QStringLiteral("abc1234") });
        if (!python.waitForStarted())
            QSKIP("no python3 here");
        QVERIFY(python.waitForFinished(30000));
        const QString table = QString::fromUtf8(python.readAllStandardOutput());
        QVERIFY2(python.exitCode() == 0, qPrintable(table + QString::fromUtf8(python.readAllStandardError())));
        const auto at = table.indexOf(QStringLiteral("\nPC-sampling phase (ms per candidate"));
        QVERIFY2(at >= 0, qPrintable(table));
        const QStringList section = table.mid(at + 1).split(QLatin1Char('\n'));
        QVERIFY2(section.size() > 5, qPrintable(table));
        // The evaluate step: both iterations (the baseline and the candidate) sampled; the double
        // reports no phase times of its own, so the row gives the runner's stored 976.9 ms.
        QVERIFY2(section[2].startsWith(
                     QStringLiteral("  evaluate --metrics lines (2 cand.)       976.9         -         - ")),
            qPrintable(section[2]));
        QVERIFY2(section[2].endsWith(QStringLiteral("  2/2 sampled, 18032 samples, 1 runs, runner 976.9 ms")),
            qPrintable(section[2]));
        QVERIFY2(section[2].mid(69, 9).trimmed().toDouble() > 0, qPrintable(section[2])); // the loop's total
        QCOMPARE(section[3],
            QStringLiteral("  test_gpu_lines pointer_chase             978.4         -         -         -  18032 "
                           "samples, 1 runs, 0 dropped, runner 976.9 ms"));
        QVERIFY2(section[5].startsWith(
                     QStringLiteral("  test_gpu_lines layernorm_gelu deep       444.7     577.3     186.4         -")),
            qPrintable(section[5]));
    }

    void jsonCarriesTheSamples()
    {
        const auto run = cli(
            { QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json"), QStringLiteral("--db"), m_store });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const auto j = nlohmann::json::parse(run.out.toStdString());
        QCOMPARE(j["result"]["pc_sampling"]["total_samples"].get<int>(), 18032);
        QCOMPARE(j["result"]["pc_sampling"]["pcs"].size(), std::size_t(115));
    }

    void evaluateAcceptsTheLinesMetricSet()
    {
        const auto help = cli({ QStringLiteral("evaluate"), QStringLiteral("--help") });
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.contains(QStringLiteral("lines")) && help.out.contains(QStringLiteral("deep")),
            qPrintable(help.out));
        const auto bad = cli({ QStringLiteral("evaluate"), QStringLiteral("x.cu"), QStringLiteral("--metrics"),
            QStringLiteral("line") });
        QCOMPARE(bad.exitCode, 2);
    }

    void aDamagedStoredValueIsACategorisedError()
    {
        const auto copy = m_dir.filePath(QStringLiteral("damaged.db"));
        QVERIFY(QFile::copy(m_store, copy));
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(copy.toUtf8().constData(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db,
                     "UPDATE results SET pc_sampling_json = '{\"status\":\"ok\",\"pcs\":[{\"line\":\"x\"}]}' "
                     "WHERE pc_sampling_json IS NOT NULL",
                     nullptr, nullptr, nullptr),
            SQLITE_OK);
        sqlite3_close(db);
        const auto run = cli(
            { QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--lines"), QStringLiteral("--db"), copy });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("[lines.bad-value]")), qPrintable(run.err));
    }
};

QTEST_GUILESS_MAIN(TestShowLinesCli)
#include "test_show_lines_cli.moc"
