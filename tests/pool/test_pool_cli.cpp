// `kernelloop-cli tune` over a pool, through the real CLI: --runner endpoints (repeatable, with the
// runner double as the local executable) and a runners file spread a round over two runners whose
// endpoints the store keeps; a bad endpoint, a GPU named twice and two executables are bad input
// (exit 2 with their category) before any runner starts.
#include "core/store/store.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <fstream>
#include <set>

namespace {

struct Ran {
    int code = -1;
    QString out;
    QString err;
};

Ran cli(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(KL_CLI), args);
    p.waitForFinished(60'000);
    return { p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
}

QString problem() { return QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json"); }

} // namespace

class TestPoolCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tuneOverTwoLocalRunners()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        const auto runners = dir.filePath(QStringLiteral("runners"));
        std::ofstream(runners.toStdString()) << "# two GPUs here\nlocal:1\n";
        const auto r = cli({ u"tune"_qs, problem(), u"--db"_qs, db, u"--runner"_qs, QStringLiteral(KL_MODEL_RUNNER),
            u"--runner"_qs, u"local:0"_qs, u"--runners-file"_qs, runners, u"--budget"_qs, u"1"_qs, u"-k"_qs, u"3"_qs,
            u"--metrics"_qs, u"none"_qs, u"--no-cache"_qs });
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        // The pool's lines: every endpoint with its device and jobs.
        QVERIFY2(r.err.contains(u"runner local:0 (Model GPU #0): idle"_qs), qPrintable(r.err));
        QVERIFY2(r.err.contains(u"runner local:1 (Model GPU #1): idle"_qs), qPrintable(r.err));
        const auto store = kl::store::Store::open(db.toStdString(), { .readOnly = true });
        const auto sessions = store.listSessions();
        QCOMPARE(int(sessions.size()), 1);
        const auto session = store.session(sessions.front().session.id);
        QVERIFY(session);
        std::set<std::string> used;
        for (int index = 1; index <= 4; ++index) {
            const auto it = store.iteration(sessions.front().session.id, index);
            QVERIFY(it && it->result);
            used.insert(it->result->endpoint);
        }
        QVERIFY(used.count("local:0") || used.count("local:1"));
        QVERIFY(!used.count(""));
        QCOMPARE(int(session->config.at("runners").size()), 2);

        // history and show say which runner and GPU measured each iteration.
        const auto history = cli({ u"history"_qs, u"--db"_qs, db, u"--session"_qs, u"1"_qs });
        QVERIFY2(history.code == 0, qPrintable(history.out + history.err));
        QVERIFY2(history.out.contains(u"measured on: Model GPU"_qs), qPrintable(history.out));
        QVERIFY2(history.out.contains(u"runner"_qs), qPrintable(history.out));
        QVERIFY2(history.out.contains(u"local:0, GPU #0"_qs) || history.out.contains(u"local:1, GPU #1"_qs),
            qPrintable(history.out));
        QVERIFY2(!history.out.contains(u"mixed-gpu-models"_qs), qPrintable(history.out));
        const auto shown = cli({ u"show"_qs, u"2"_qs, u"--db"_qs, db, u"--session"_qs, u"1"_qs });
        QVERIFY2(shown.code == 0, qPrintable(shown.out + shown.err));
        QVERIFY2(shown.out.contains(QRegularExpression(u"measured: +local:[01], Model GPU #[01]"_qs)),
            qPrintable(shown.out));

        // A runner of another GPU model never adds to this session: its speedup over the best would
        // compare two models. Refused as bad input, nothing written.
        auto other = QProcessEnvironment::systemEnvironment();
        other.insert(u"KL_MODEL_RUNNER_NAME_DEVICE"_qs, u"0:Other GPU"_qs);
        const auto refused = cli({ u"evaluate"_qs, problem(), u"--db"_qs, db, u"--runner"_qs,
                                     QStringLiteral(KL_MODEL_RUNNER), u"--metrics"_qs, u"none"_qs,
                                     QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/baseline.cu"),
                                     u"--session"_qs, u"1"_qs },
            other);
        QCOMPARE(refused.code, 2);
        QVERIFY2(refused.err.contains(u"[session.other-gpu-model]"_qs), qPrintable(refused.err));
        QVERIFY2(refused.err.contains(u"Other GPU"_qs), qPrintable(refused.err));
        const auto after = kl::store::Store::open(db.toStdString(), { .readOnly = true });
        QCOMPARE(int(after.listIterations(sessions.front().session.id).size()), 4);
    }

    // The H200 measurement's form (docs/runner-pool.md): two runners on GPU 0, allowed only with
    // KL_POOL_SHARE_GPUS=1; both take jobs, both are recorded as local:0.
    void twoRunnersOnOneGpu()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert(u"KL_POOL_SHARE_GPUS"_qs, u"1"_qs);
        env.insert(u"KL_MODEL_RUNNER_DELAY_MS"_qs, u"300"_qs);
        const auto r = cli({ u"tune"_qs, problem(), u"--db"_qs, db, u"--runner"_qs, QStringLiteral(KL_MODEL_RUNNER),
                               u"--runner"_qs, u"local:0"_qs, u"--runner"_qs, u"local:0"_qs, u"--budget"_qs, u"1"_qs,
                               u"-k"_qs, u"2"_qs, u"--metrics"_qs, u"none"_qs, u"--no-cache"_qs },
            env);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QCOMPARE(int(r.err.count(u"runner local:0 (Model GPU #0): idle"_qs)), 2);
        const auto store = kl::store::Store::open(db.toStdString(), { .readOnly = true });
        const auto id = store.listSessions().front().session.id;
        for (int index = 1; index <= 3; ++index) {
            const auto it = store.iteration(id, index);
            QVERIFY(it && it->result);
            QCOMPARE(QString::fromStdString(it->result->endpoint), u"local:0"_qs);
        }
    }

    void badRunnersAreBadInput_data()
    {
        QTest::addColumn<QStringList>("runnerArgs");
        QTest::addColumn<QString>("category");
        QTest::newRow("no host") << QStringList { u"--runner"_qs, u"ssh:"_qs } << u"[runner.bad-endpoint]"_qs;
        QTest::newRow("option as host") << QStringList { u"--runner"_qs, u"ssh:-oProxyCommand=x"_qs }
                                        << u"[runner.bad-endpoint]"_qs;
        QTest::newRow("gpu twice") << QStringList { u"--runner"_qs, u"local:0"_qs, u"--runner"_qs, u"local:0"_qs }
                                   << u"[runner.duplicate-endpoint]"_qs;
        QTest::newRow("two executables") << QStringList { u"--runner"_qs, u"/a/runner"_qs, u"--runner"_qs,
            u"/b/runner"_qs } << u"[cli.bad-runner]"_qs;
        QTest::newRow("runners file is a folder")
            << QStringList { u"--runners-file"_qs, u"/tmp"_qs } << u"[runners.not-a-file]"_qs;
    }
    void badRunnersAreBadInput()
    {
        QFETCH(QStringList, runnerArgs);
        QFETCH(QString, category);
        QTemporaryDir dir;
        const auto r
            = cli(QStringList { u"tune"_qs, problem(), u"--db"_qs, dir.filePath(QStringLiteral("s.db")) } + runnerArgs);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(category), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestPoolCli)
#include "test_pool_cli.moc"
