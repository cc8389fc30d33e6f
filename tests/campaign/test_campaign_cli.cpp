// `kernelloop-cli campaign` for real: six problems over two runner doubles at the process boundary and a
// real SQLite store. Three pass (a bundled CUDA problem and two KernelBench files imported with Debian's
// CPU PyTorch, timed against eager and torch.compile); three fail, each a row with its category (a
// baseline that does not compile, one that computes the wrong thing, a KernelBench file refused at
// import). Mid-campaign one runner is killed with SIGKILL, then the CLI itself; the same command resumes
// without running a finished problem again, and every figure of the report equals what `history` says for
// its session. A runner that dies on every job is given up and its problems go to the other.
#include "core/store/campaign_store.h"
#include "core/store/store.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <sys/types.h>

namespace fs = std::filesystem;

namespace {

struct Ran {
    int code = -1;
    QString out;
    QString err;
};

QProcessEnvironment baseEnvironment()
{
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(u"KL_PYTHON"_qs, u"/usr/bin/python3"_qs); // Debian's CPU PyTorch
    return env;
}

Ran cli(const QStringList& args, const QProcessEnvironment& env = baseEnvironment(), int timeoutMs = 120'000)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(KL_CLI), args);
    p.waitForFinished(timeoutMs);
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
        QString::fromUtf8(p.readAllStandardError()) };
}

bool hasTorch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

std::vector<std::string> commandLineOf(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');)
        args.push_back(arg);
    return args;
}

pid_t parentOf(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return 0;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    fields >> state >> parent;
    return parent;
}

// The runner double of GPU `device` started (directly or through a shell) by process `owner`; 0: none.
pid_t runnerOf(qint64 owner, int device)
{
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const pid_t pid = std::stoi(name);
        const auto args = commandLineOf(pid);
        if (args.empty() || args.front() != KL_MODEL_RUNNER)
            continue;
        const auto at = std::find(args.begin(), args.end(), "--device");
        if (at == args.end() || at + 1 == args.end() || *(at + 1) != std::to_string(device))
            continue;
        for (pid_t up = parentOf(pid), hops = 0; up > 1 && hops < 4; up = parentOf(up), ++hops)
            if (up == owner)
                return pid;
    }
    return 0;
}

// Whether any committed result of the store says a runner was killed with SIGKILL.
bool killCommitted(const std::string& db)
{
    try {
        const auto store = kl::store::Store::open(db, { .readOnly = true });
        for (const auto& s : store.listSessions())
            for (const auto& row : store.listIterations(s.session.id))
                if (const auto it = store.iteration(s.session.id, row.index);
                    it && it->result && it->result->detail.find("SIGKILL") != std::string::npos)
                    return true;
    } catch (const std::exception&) {
    }
    return false;
}

std::vector<kl::store::CampaignProblemRecord> rowsOf(const std::string& db, const std::string& name)
{
    try {
        const auto record = kl::store::CampaignStore::open(db, { .readOnly = true });
        if (const auto c = record.campaignNamed(name))
            return record.problems(c->id);
    } catch (const std::exception&) {
    }
    return {};
}

int countWith(const std::vector<kl::store::CampaignProblemRecord>& rows, const std::string& status)
{
    return int(std::count_if(rows.begin(), rows.end(), [&](const auto& r) { return r.status == status; }));
}

std::string fixed2(double v, int decimals = 2)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

QString source(const char* relative) { return QStringLiteral(KL_SOURCE_DIR "/") + QString::fromUtf8(relative); }

} // namespace

class TestCampaignCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void killedRunnerKilledCliResumedReport()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch): the KernelBench problems");
        QTemporaryDir dir;
        const auto at = [&](const char* name) { return dir.filePath(QString::fromUtf8(name)); };
        const auto db = at("s.db").toStdString();
        // Two KernelBench files with a CUDA baseline each: a PyTorch reference, so eager and torch.compile
        // are contenders timed in every job.
        for (const char* name : { "gelu", "rms_norm" }) {
            const auto imported = cli({ u"import-kernelbench"_qs,
                source("resources/kernelbench/") + QString::fromUtf8(name) + u".py"_qs, u"-o"_qs, at(name),
                u"--baseline"_qs, source("tests/kernelbench/baselines/") + QString::fromUtf8(name) + u".cu"_qs });
            QVERIFY2(imported.code == 0, qPrintable(imported.out + imported.err));
        }
        // A baseline that does not compile.
        fs::copy(source("resources/examples/layernorm_gelu").toStdString(), at("broken").toStdString());
        std::ofstream(at("broken/baseline.cu").toStdString(), std::ios::app) << "\nstatic int broken = ;\n";
        // A KernelBench file refused at import: its forward draws random numbers.
        QFile hostile(at("hostile.py"));
        QVERIFY(hostile.open(QIODevice::WriteOnly));
        hostile.write("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n\n    def forward(self, x):\n        return x + torch.rand_like(x)\n"
                      "\n\nbatch_size = 8\ndim = 64\n\n\ndef get_inputs():\n    return [torch.randn(batch_size, dim)]\n"
                      "\n\ndef get_init_inputs():\n    return []\n");
        hostile.close();
        const QStringList problems { source("resources/examples/layernorm_gelu"), at("gelu"), at("broken"),
            at("rms_norm/problem.json"), source("resources/examples/softmax_bf16"), at("hostile.py") };
        const QStringList command = QStringList { u"campaign"_qs, u"--name"_qs, u"t"_qs, u"--db"_qs,
            QString::fromStdString(db), u"--runner"_qs, QStringLiteral(KL_MODEL_RUNNER), u"--runner"_qs, u"local:0"_qs,
            u"--runner"_qs, u"local:1"_qs, u"--budget"_qs, u"3"_qs, u"--metrics"_qs, u"none"_qs, u"--no-cache"_qs }
            + problems;
        auto env = baseEnvironment();
        env.insert(u"KL_MODEL_RUNNER_WRONG_KERNEL"_qs, u"row_stats"_qs); // softmax_bf16's first kernel
        env.insert(u"KL_MODEL_RUNNER_TORCH_COMPILE_US"_qs, u"95"_qs);
        env.insert(u"KL_MODEL_RUNNER_LOG"_qs, at("runner.log"));
        auto slow = env;
        slow.insert(u"KL_MODEL_RUNNER_DELAY_MS"_qs, u"250"_qs);

        // First run: the runner of GPU 1 is killed during a job, later the CLI itself.
        QProcess first;
        first.setProcessEnvironment(slow);
        first.start(QStringLiteral(KL_CLI), command);
        QVERIFY(first.waitForStarted());
        pid_t killedRunner = 0;
        const bool killed = QTest::qWaitFor(
            [&] {
                if (!killedRunner) {
                    std::ifstream log(at("runner.log").toStdString());
                    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
                    if (text.find("device=1") != std::string::npos)
                        if (const pid_t pid = runnerOf(first.processId(), 1); pid > 0 && ::kill(pid, SIGKILL) == 0)
                            killedRunner = pid;
                    return false;
                }
                const auto rows = rowsOf(db, "t");
                if (countWith(rows, "done") < 1 || countWith(rows, "running") < 1 || !killCommitted(db))
                    return false;
                first.kill(); // SIGKILL, as kill -9
                return true;
            },
            90'000);
        QVERIFY2(killed, qPrintable(QString::fromUtf8(first.readAllStandardOutput())));
        first.waitForFinished(10'000);
        QCOMPARE(first.exitStatus(), QProcess::CrashExit);
        const auto before = rowsOf(db, "t");
        QCOMPARE(int(before.size()), 6);
        std::map<int, std::int64_t> finished; // position -> its session
        for (const auto& r : before)
            if (r.status == "done" || r.status == "failed")
                finished[r.position] = r.sessionId.value_or(0);
        QVERIFY(!finished.empty());
        QVERIFY(countWith(before, "running") >= 1);
        {
            const auto record = kl::store::CampaignStore::open(db, { .readOnly = true });
            QCOMPARE(QString::fromStdString(record.campaignNamed("t")->status), u"interrupted"_qs);
        }

        // The same command resumes: only what did not finish runs.
        const auto again = cli(command, env);
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains(u"resuming campaign"_qs), qPrintable(again.out));
        const auto after = rowsOf(db, "t");
        std::map<std::string, int> sessionsByLabel;
        {
            const auto store = kl::store::Store::open(db, { .readOnly = true });
            for (const auto& s : store.listSessions())
                ++sessionsByLabel[s.session.label];
        }
        for (const auto& [position, session] : finished) {
            QCOMPARE(after[std::size_t(position)].sessionId.value_or(0), session); // not run again
            const auto stem = fs::path(problems[position].toStdString()).stem().string();
            if (session)
                QCOMPARE(sessionsByLabel["t/" + (stem == "problem" ? std::string("rms_norm") : stem)], 1);
        }
        const std::vector<std::pair<std::string, std::string>> expected { { "done", "" }, { "done", "" },
            { "failed", "problem.baseline-compile" }, { "done", "" }, { "failed", "wrong-result" },
            { "failed", "kernelbench.random-ops" } };
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QVERIFY2(after[i].status == expected[i].first,
                qPrintable(QString::number(i) + u": "_qs
                    + QString::fromStdString(after[i].status + " " + after[i].category + " " + after[i].detail)));
            QVERIFY2(after[i].category.rfind(expected[i].second, 0) == 0, after[i].category.c_str());
        }
        QVERIFY(killCommitted(db)); // the killed runner's job was requeued, and says so

        // Every figure of the report is what `history` says for that session's best iteration.
        const auto report = cli({ u"campaign-report"_qs, u"t"_qs, u"--db"_qs, QString::fromStdString(db),
            u"--format"_qs, u"json"_qs, u"--svg"_qs, at("dist.svg"), u"--kernels"_qs, at("winners") });
        QVERIFY2(report.code == 0, qPrintable(report.out + report.err));
        const auto json = nlohmann::json::parse(report.out.toStdString());
        QCOMPARE(json["figures"]["done"].get<int>(), 3);
        QCOMPARE(json["figures"]["failed"].get<int>(), 3);
        int contenders = 0;
        int fastCompile = 0;
        for (const auto& p : json["problems"]) {
            if (p["status"] != "done")
                continue;
            const auto session = p["session"].get<std::int64_t>();
            const auto history = cli(
                { u"history"_qs, u"--db"_qs, QString::fromStdString(db), u"--session"_qs, QString::number(session) });
            QVERIFY2(history.code == 0, qPrintable(history.err));
            const QRegularExpression line(
                QStringLiteral("^ *%1 +\\S+ +passed +(\\S+) +\\S+ +\\S+ +(\\S+) +\\S+ +(\\S+)")
                    .arg(p["iteration"].get<int>()),
                QRegularExpression::MultilineOption);
            const auto m = line.match(history.out);
            QVERIFY2(m.hasMatch(), qPrintable(history.out));
            QCOMPARE(m.captured(1).toStdString(), fixed2(p["median_us"].get<double>()));
            QCOMPARE(m.captured(3).toStdString(), fixed2(p["speedup"].get<double>()) + "x");
            QCOMPARE(m.captured(2).toStdString(),
                p["pct_of_sol"].is_null() ? std::string("-") : fixed2(p["pct_of_sol"].get<double>(), 1));
            if (!p["vs_eager"].is_null()) {
                ++contenders;
                // The PyTorch line under that row (one main size).
                const auto rest = history.out.mid(m.capturedEnd());
                const auto next = rest.indexOf(QRegularExpression(u"\n *\\d+ "_qs));
                const auto block = next < 0 ? rest : rest.left(next);
                QVERIFY2(
                    block.contains(QString::fromStdString("vs eager " + fixed2(p["vs_eager"].get<double>()) + "x")),
                    qPrintable(block));
                QVERIFY2(block.contains(QString::fromStdString(
                             "vs torch.compile " + fixed2(p["vs_torch_compile"].get<double>()) + "x")),
                    qPrintable(block));
                if (p["vs_torch_compile"].get<double>() > 1.0)
                    ++fastCompile;
            }
        }
        QCOMPARE(contenders, 2);
        QCOMPARE(json["figures"]["fast_1_vs_torch_compile"]["fast"].get<int>(), fastCompile);
        QCOMPARE(json["figures"]["fast_1_vs_torch_compile"]["of"].get<int>(), 6);
        QCOMPARE(json["figures"]["geomean_vs_torch_compile_over"].get<int>(), 2);
        QVERIFY(QFile::exists(at("dist.svg")));
        QCOMPARE(int(std::distance(fs::directory_iterator(at("winners").toStdString()), fs::directory_iterator())), 3);
        const auto markdown
            = cli({ u"campaign-report"_qs, u"--db"_qs, QString::fromStdString(db), u"--format"_qs, u"markdown"_qs });
        QVERIFY2(markdown.out.contains(u"| fast_1.2 |"_qs), qPrintable(markdown.out));
        QVERIFY2(markdown.out.contains(u"failed: kernelbench.random-ops"_qs), qPrintable(markdown.out));
    }

    // A runner that dies on every job: its problems are handed to the other, it is given up, and every
    // problem finishes there.
    void runnerGoneForGood()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(u"s.db"_qs);
        auto env = baseEnvironment();
        env.insert(u"KL_MODEL_RUNNER_KILL_DEVICE"_qs, u"1"_qs);
        const auto r
            = cli({ u"campaign"_qs, u"--name"_qs, u"k"_qs, u"--db"_qs, db, u"--runner"_qs,
                      QStringLiteral(KL_MODEL_RUNNER), u"--runner"_qs, u"local:0"_qs, u"--runner"_qs, u"local:1"_qs,
                      u"--budget"_qs, u"1"_qs, u"--metrics"_qs, u"none"_qs, source("resources/examples/layernorm_gelu"),
                      source("resources/examples/softmax_bf16"), source("resources/examples/gemm_fp16") },
                env);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(u"[runner.lost] on local:1, handed to another runner"_qs), qPrintable(r.out));
        const auto rows = rowsOf(db.toStdString(), "k");
        QCOMPARE(int(rows.size()), 3);
        for (const auto& row : rows) {
            QCOMPARE(QString::fromStdString(row.status), u"done"_qs);
            QCOMPARE(QString::fromStdString(row.endpoint), u"local:0"_qs);
        }
        // A second run of a finished campaign runs nothing.
        const auto again = cli({ u"campaign"_qs, u"--name"_qs, u"k"_qs, u"--db"_qs, db, u"--runner"_qs,
                                   QStringLiteral(KL_MODEL_RUNNER), u"--runner"_qs, u"local:0"_qs },
            env);
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains(u"0 of 3 problems to run"_qs), qPrintable(again.out));
    }
};

QTEST_GUILESS_MAIN(TestCampaignCli)
#include "test_campaign_cli.moc"
