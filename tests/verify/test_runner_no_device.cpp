// The real kernelloop-runner where it cannot reach a GPU (CI has neither a driver nor a GPU; on a
// GPU machine the driver path is overridden or the device index is out of range): it still
// starts, says why in its hello, answers every request with no-device, refuses malformed lines
// with bad-request, and leaves cleanly on shutdown or end of input.
#include "core/protocol/messages.h"

#include <QProcess>
#include <QtTest>

using namespace kl;

namespace {

QString runnerPath()
{
    const QByteArray fromEnvironment = qgetenv("KL_RUNNER");
    return fromEnvironment.isEmpty() ? QStringLiteral(KL_RUNNER_PATH) : QString::fromLocal8Bit(fromEnvironment);
}

// A runner as a child process, read one line at a time with a deadline.
class RunnerUnderTest {
public:
    explicit RunnerUnderTest(
        const QStringList& args, const QString& driver = QStringLiteral("/nonexistent/libcuda.so.1"))
    {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        if (!driver.isEmpty())
            environment.insert(QStringLiteral("KL_CUDA_DRIVER"), driver);
        process.setProcessEnvironment(environment);
        process.setProcessChannelMode(QProcess::SeparateChannels);
        process.start(runnerPath(), args);
    }
    ~RunnerUnderTest()
    {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
    std::string readLine()
    {
        while (!process.canReadLine()) {
            if (!process.waitForReadyRead(10000))
                return {};
        }
        return process.readLine().toStdString();
    }
    std::string ask(const std::string& line)
    {
        process.write(QByteArray::fromStdString(line + "\n"));
        return readLine();
    }
    QProcess process;
};

} // namespace

class TestRunnerNoDevice : public QObject {
    Q_OBJECT

private slots:
    void helloSaysWhyThereIsNoDevice()
    {
        RunnerUnderTest runner({});
        QVERIFY2(runner.process.waitForStarted(10000), qPrintable(runner.process.errorString()));
        const auto hello = protocol::parseMessage<protocol::Hello>(runner.readLine());
        QVERIFY(!hello.deviceOk);
        QCOMPARE(hello.protocol, 1);
        QCOMPARE(hello.deviceIndex, 0);
        QVERIFY2(hello.detail.find("/nonexistent/libcuda.so.1") != std::string::npos, hello.detail.c_str());
        QVERIFY(hello.pid > 0);
        QCOMPARE(hello.pid, std::int64_t(runner.process.processId()));
    }

    void everyRequestIsAnsweredWithNoDevice()
    {
        RunnerUnderTest runner({});
        runner.readLine();
        const auto describe
            = protocol::parseMessage<protocol::DescribeResult>(runner.ask(R"({"v":1,"id":"d1","type":"describe"})"));
        QCOMPARE(describe.header.id, std::string("d1"));
        QCOMPARE(describe.header.status, protocol::Status::Error);
        QCOMPARE(describe.header.category, std::optional(protocol::Category::NoDevice));
        QVERIFY(!describe.device);

        // A well-formed request (a malformed one would be a bad-request first).
        protocol::EvaluateRequest request;
        request.id = "e1";
        request.modules.reference.cubin = "not a cubin";
        request.modules.candidate.cubin = "not a cubin";
        protocol::Case one;
        one.label = "4x8";
        one.timed = true;
        one.buffers.push_back({ "y", PlannedBuffer::Role::Output, DType::F32, 4, 8, 8, std::nullopt });
        protocol::Launch launch;
        launch.kernel = "k";
        launch.args = { protocol::BufferArg { "y" }, protocol::makeScalarArg(DType::I32, 4) };
        one.programs.reference.launches = { launch };
        one.programs.candidate.launches = { launch };
        request.cases = { one };
        const auto evaluate
            = protocol::parseMessage<protocol::EvaluateResult>(runner.ask(nlohmann::json(request).dump()));
        QCOMPARE(evaluate.header.id, std::string("e1"));
        QCOMPARE(evaluate.header.status, protocol::Status::Error);
        QCOMPARE(evaluate.category(), protocol::Category::NoDevice);
        QVERIFY(!evaluate.timing);
        QVERIFY(!evaluate.verification);
    }

    void malformedLinesAreBadRequests_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("id");
        QTest::newRow("not json") << QStringLiteral("garbage") << QString();
        QTest::newRow("wrong version") << QStringLiteral(R"({"v":2,"id":"x","type":"describe"})")
                                       << QStringLiteral("x");
        QTest::newRow("unknown type") << QStringLiteral(R"({"v":1,"id":"y","type":"dance"})") << QStringLiteral("y");
        QTest::newRow("evaluate without cases")
            << QStringLiteral(R"({"v":1,"id":"z","type":"evaluate","options":{}})") << QStringLiteral("z");
    }
    void malformedLinesAreBadRequests()
    {
        QFETCH(QString, line);
        QFETCH(QString, id);
        RunnerUnderTest runner({});
        runner.readLine();
        const auto reply = protocol::parseLine(runner.ask(line.toStdString()));
        QCOMPARE(QString::fromStdString(reply.value("status", "")), QStringLiteral("error"));
        QCOMPARE(QString::fromStdString(reply.value("category", "")), QStringLiteral("bad-request"));
        if (!id.isEmpty())
            QCOMPARE(QString::fromStdString(reply.value("id", "")), id);
        // Still serving.
        const auto describe
            = protocol::parseMessage<protocol::DescribeResult>(runner.ask(R"({"v":1,"id":"after","type":"describe"})"));
        QCOMPARE(describe.header.id, std::string("after"));
    }

    void shutdownIsAcknowledgedAndTheRunnerExits()
    {
        RunnerUnderTest runner({});
        runner.readLine();
        const auto result
            = protocol::parseMessage<protocol::ShutdownResult>(runner.ask(R"({"v":1,"id":"s","type":"shutdown"})"));
        QCOMPARE(result.header.status, protocol::Status::Ok);
        QVERIFY(runner.process.waitForFinished(10000));
        QCOMPARE(runner.process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(runner.process.exitCode(), 0);
    }

    void endOfInputEndsTheRunner()
    {
        RunnerUnderTest runner({});
        runner.readLine();
        runner.process.closeWriteChannel();
        QVERIFY(runner.process.waitForFinished(10000));
        QCOMPARE(runner.process.exitCode(), 0);
    }

    void deviceOutOfRangeIsNoDevice()
    {
        // With the real driver path: no driver here, or (on a GPU machine) no device 4096.
        RunnerUnderTest runner({ QStringLiteral("--device"), QStringLiteral("4096") }, QString());
        const auto hello = protocol::parseMessage<protocol::Hello>(runner.readLine());
        QVERIFY(!hello.deviceOk);
        QCOMPARE(hello.deviceIndex, 4096);
        QVERIFY(!hello.detail.empty());
    }

    void badArgumentsAreRefused()
    {
        QProcess process;
        process.start(runnerPath(), { QStringLiteral("--device"), QStringLiteral("one") });
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardOutput().isEmpty()); // no hello: nothing on the protocol channel
        QVERIFY(process.readAllStandardError().contains("usage"));
    }
};

QTEST_GUILESS_MAIN(TestRunnerNoDevice)
#include "test_runner_no_device.moc"
