// Runner endpoints as the user writes them: every form parsed to its parts and back to one text,
// every malformed one refused with runner.bad-endpoint (no host, a host that ssh would read as an
// option, a GPU that is not a number, Slurm arguments the pool sets itself), local:all expanded and
// duplicates refused, runners files with comments and a bad line named, and the commands that ssh
// and srun endpoints and runner command lines (cmd:, a local runner with blanks) become.
#include "core/model/error.h"
#include "core/pool/runner_endpoint.h"
#include "core/pool/slurm_allocation.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace kl;
using namespace kl::pool;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string categoryOf(const std::string& text)
{
    try {
        parseEndpoint(text);
    } catch (const Error& e) {
        return e.category();
    }
    return "parsed";
}

bool has(const std::vector<std::string>& v, const std::string& s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

class TestRunnerEndpoints : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void forms()
    {
        const auto l = parseEndpoint("local:3");
        QVERIFY(l.kind == EndpointKind::Local && l.gpu == 3 && !l.allLocal);
        QVERIFY(parseEndpoint("local:all").allLocal);
        const auto s = parseEndpoint("ssh:me@gpu-box.lab:1");
        QVERIFY(s.kind == EndpointKind::Ssh);
        QCOMPARE(q(s.user), u"me"_qs);
        QCOMPARE(q(s.host), u"gpu-box.lab"_qs);
        QCOMPARE(s.gpu, 1);
        const auto plain = parseEndpoint("ssh:box");
        QVERIFY(plain.user.empty() && plain.gpu == 0);
        const auto v6 = parseEndpoint("ssh:[::1]:2");
        QCOMPARE(q(v6.host), u"::1"_qs);
        QCOMPARE(v6.gpu, 2);
        const auto slurm = parseEndpoint("slurm:-p gpu --time=30 --comment='two words'");
        QVERIFY(slurm.kind == EndpointKind::Slurm);
        QCOMPARE(int(slurm.slurmArgs.size()), 4);
        QCOMPARE(q(slurm.slurmArgs[3]), u"--comment=two words"_qs);
        QVERIFY(parseEndpoint("slurm:").slurmArgs.empty());
        // The canonical text reads back as the same endpoint.
        for (const auto* text : { "local:0", "local:all", "ssh:me@box:1", "ssh:box:0", "ssh:[::1]:2",
                 "slurm:-p gpu '--comment=two words'", "slurm:" }) {
            const auto e = parseEndpoint(text);
            QVERIFY2(parseEndpoint(e.text()) == e, text);
        }
        QCOMPARE(q(parseEndpoint("ssh:box").text()), u"ssh:box:0"_qs);
    }

    void malformedAreCategorised_data()
    {
        QTest::addColumn<QString>("text");
        for (const auto* t : { "", "local", "gpu:0", "local:", "local:x", "local:-1", "local:99999", "ssh:", "ssh:@box",
                 "ssh:me@", "ssh:-oProxyCommand=evil", "ssh:box:", "ssh:box:x", "ssh:bo x", "ssh:box;rm", "ssh:[::1",
                 "ssh:-me@box", "slurm:--jobid=4", "slurm:--no-shell", "slurm:-p 'gpu", "slurm:\x01" })
            QTest::newRow(t) << QString::fromUtf8(t);
    }
    void malformedAreCategorised()
    {
        QFETCH(QString, text);
        QCOMPARE(q(categoryOf(text.toStdString())), u"runner.bad-endpoint"_qs);
    }

    void localAllAndDuplicates()
    {
        const auto three = expandEndpoints({ parseEndpoint("local:all"), parseEndpoint("ssh:box") }, 3);
        QCOMPARE(int(three.size()), 4);
        QCOMPARE(q(three[2].text()), u"local:2"_qs);
        // No driver here: local:all is local:0, whose runner then says why there is no device.
        const auto none = expandEndpoints({ parseEndpoint("local:all") }, 0);
        QCOMPARE(int(none.size()), 1);
        QCOMPARE(q(none[0].text()), u"local:0"_qs);
        try {
            expandEndpoints({ parseEndpoint("local:all"), parseEndpoint("local:1") }, 2);
            QFAIL("a GPU named twice was accepted");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.duplicate-endpoint"_qs);
        }
        // Only for measuring the pool (issue 14's two runners on GPU 0): KL_POOL_SHARE_GPUS=1.
        ::setenv("KL_POOL_SHARE_GPUS", "1", 1);
        const auto shared = expandEndpoints({ parseEndpoint("local:0"), parseEndpoint("local:0") }, 1);
        ::unsetenv("KL_POOL_SHARE_GPUS");
        QCOMPARE(int(shared.size()), 2);
        // Two Slurm endpoints with the same arguments are two allocations, not one GPU twice.
        QCOMPARE(int(expandEndpoints({ parseEndpoint("slurm:"), parseEndpoint("slurm:") }, 0).size()), 2);
    }

    void runnersFile()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(u"runners"_qs).toStdString();
        std::ofstream(path) << "# the lab's GPUs\n\nlocal:0\n  ssh:me@box:1  \nslurm:-p gpu\n";
        const auto list = readRunnersFile(path);
        QCOMPARE(int(list.size()), 3);
        QCOMPARE(q(list[1].text()), u"ssh:me@box:1"_qs);
        std::ofstream(path) << "local:0\nssh:\n";
        try {
            readRunnersFile(path);
            QFAIL("a bad line was accepted");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.bad-endpoint"_qs);
            QCOMPARE(q(e.where()), u"line 2"_qs);
            QCOMPARE(q(e.file()), q(path));
        }
        std::ofstream(path) << "# nothing\n";
        QVERIFY_THROWS_EXCEPTION(Error, readRunnersFile(path));
        try {
            readRunnersFile(dir.path().toStdString());
            QFAIL("a folder was read as a runners file");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runners.not-a-file"_qs);
        }
    }

    void commands()
    {
        EndpointOptions o;
        o.localRunner = "/opt/kl/kernelloop-runner";
        o.remoteRunner = "/srv/kl/bin/kernelloop-runner";
        o.ssh = "/bin/sh"; // any executable stands in for the program in these command lines
        o.srun = "/bin/sh";
        o.sshOptions = { "Port=2222", "IdentityFile=/k" };
        const auto local = runnerConfigFor(parseEndpoint("local:2"), o);
        QVERIFY(local.launcher.empty());
        QCOMPARE(local.deviceIndex, 2);
        QCOMPARE(q(local.path.string()), u"/opt/kl/kernelloop-runner"_qs);

        const auto ssh = runnerConfigFor(parseEndpoint("ssh:me@box:1"), o);
        QVERIFY(ssh.remoteShell);
        QCOMPARE(ssh.deviceIndex, 1);
        QCOMPARE(q(ssh.path.string()), u"/srv/kl/bin/kernelloop-runner"_qs);
        QCOMPARE(q(ssh.launcher.front()), u"/bin/sh"_qs);
        QVERIFY(has(ssh.launcher, "BatchMode=yes"));
        QVERIFY(has(ssh.launcher, "Port=2222") && has(ssh.launcher, "IdentityFile=/k"));
        QCOMPARE(q(ssh.launcher.back()), u"me@box"_qs);
        QCOMPARE(q(ssh.launcher[ssh.launcher.size() - 2]), u"--"_qs); // the host is never read as an option

        const auto slurm = runnerConfigFor(parseEndpoint("slurm:-p gpu"), o, "42");
        QVERIFY(has(slurm.launcher, "--jobid=42"));
        QVERIFY(has(slurm.launcher, "--gres=gpu:1"));
        QCOMPARE(slurm.deviceIndex, 0);
        o.slurmGres.clear();
        const auto noGres = runnerConfigFor(parseEndpoint("slurm:"), o, "7");
        QVERIFY(std::none_of(noGres.launcher.begin(), noGres.launcher.end(),
            [](const std::string& a) { return a.rfind("--gres", 0) == 0; }));

        o.ssh = "kl-no-such-ssh";
        try {
            runnerConfigFor(parseEndpoint("ssh:box"), o);
            QFAIL("a missing ssh was accepted");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.no-ssh"_qs);
        }
        o.srun = "kl-no-such-srun";
        QVERIFY_THROWS_EXCEPTION(Error, runnerConfigFor(parseEndpoint("slurm:"), o, "1"));
    }

    // A runner given as a command: cmd:WORDS, or a line with blanks and no kind; its words split as the
    // shell does, its program found on PATH, the runner's own path last, --device N appended by the client.
    void commandRunners()
    {
        const auto c = parseEndpoint("cmd:env KL_A='one two' /opt/kl/kernelloop-runner");
        QVERIFY(c.kind == EndpointKind::Command);
        QCOMPARE(int(c.command.size()), 3);
        QCOMPARE(q(c.command[1]), u"KL_A=one two"_qs);
        QCOMPARE(q(c.text()), u"cmd:env 'KL_A=one two' /opt/kl/kernelloop-runner"_qs);
        QVERIFY(parseEndpoint(c.text()) == c);
        const auto blanks = parseEndpoint("ssh gpuhost kernelloop-runner");
        QVERIFY(blanks.kind == EndpointKind::Command);
        QCOMPARE(q(blanks.text()), u"cmd:ssh gpuhost kernelloop-runner"_qs);
        QVERIFY(namesEndpoint("cmd:ssh gpuhost kernelloop-runner"));
        QVERIFY(!namesEndpoint("ssh gpuhost kernelloop-runner")); // --runner: the local runner, a command line
        QVERIFY(namesRunnerCommand("ssh gpuhost kernelloop-runner"));
        QVERIFY(!namesRunnerCommand("/opt/kl/kernelloop-runner"));
        for (const auto* wrong : { "cmd:", "cmd:env 'A=1", "ssh:gpu host" })
            QVERIFY2(categoryOf(wrong) == "runner.bad-endpoint", wrong);

        EndpointOptions o;
        Endpoint one = parseEndpoint("cmd:env KL_A=1 /opt/kl/kernelloop-runner");
        one.gpu = 1;
        const auto config = runnerConfigFor(one, o);
        QVERIFY(!config.remoteShell);
        QCOMPARE(config.deviceIndex, 1);
        QVERIFY(q(config.launcher.front()).endsWith(u"/env"_qs)); // found on PATH: spawned without a search
        QCOMPARE(int(config.launcher.size()), 2);
        QCOMPARE(q(config.launcher[1]), u"KL_A=1"_qs);
        QCOMPARE(q(config.path.string()), u"/opt/kl/kernelloop-runner"_qs);
        // One word: the runner itself, found on PATH.
        const auto alone = runnerConfigFor(parseEndpoint("cmd:sh"), o);
        QVERIFY(alone.launcher.empty());
        QVERIFY(q(alone.path.string()).endsWith(u"/sh"_qs));
        try {
            runnerConfigFor(parseEndpoint("cmd:kl-no-such-wrapper kernelloop-runner"), o);
            QFAIL("a missing program was accepted");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.no-command"_qs);
        }

        // A local runner that is a command line, and one whose folder has a blank in its name.
        QTemporaryDir dir;
        const auto spaced = dir.filePath(u"my runners/kernelloop-runner"_qs).toStdString();
        std::filesystem::create_directories(std::filesystem::path(spaced).parent_path());
        std::ofstream(spaced) << "#!/bin/sh\n";
        QVERIFY(!namesRunnerCommand(spaced));
        o.localRunner = spaced;
        QCOMPARE(q(runnerConfigFor(parseEndpoint("local:0"), o).path.string()), q(spaced));
        o.localRunner = "env KL_A=1 /opt/kl/kernelloop-runner";
        const auto local = runnerConfigFor(parseEndpoint("local:3"), o);
        QCOMPARE(local.deviceIndex, 3);
        QCOMPARE(q(local.launcher[1]), u"KL_A=1"_qs);
        QCOMPARE(q(local.path.string()), u"/opt/kl/kernelloop-runner"_qs);
    }

    void sallocGrant()
    {
        QCOMPARE(q(grantedJobId("salloc: Granted job allocation 4711\n")), u"4711"_qs);
        QCOMPARE(q(grantedJobId("salloc: Pending job allocation 12\nsalloc: job 12 queued\n")), u"12"_qs);
        QVERIFY(grantedJobId("salloc: error: invalid partition").empty());
    }
};

QTEST_GUILESS_MAIN(TestRunnerEndpoints)
#include "test_runner_endpoints.moc"
