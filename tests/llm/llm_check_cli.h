#pragma once
// The real kernelloop-cli as the llm-check suites run it: a planted key in KL_TEST_KEY, no proxy in
// its environment (every request stays on 127.0.0.1), at most 20 s, and what it printed.
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace kl::test {

struct CliRun {
    int exitCode = -1; // -1: still running after 20 s (killed); -2: it crashed
    QString out;
    QString err;
    qint64 ms = 0;
};

inline CliRun runCli(const QString& program, const QStringList& arguments, const QString& key)
{
    QProcess p;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("KL_TEST_KEY"), key);
    for (const auto& name : { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" })
        environment.remove(QString::fromLatin1(name));
    p.setProcessEnvironment(environment);
    QElapsedTimer timer;
    timer.start();
    p.start(program, arguments);
    CliRun run;
    if (!p.waitForFinished(20000)) {
        p.kill();
        p.waitForFinished();
        return run;
    }
    run.ms = timer.elapsed();
    run.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    run.out = QString::fromUtf8(p.readAllStandardOutput());
    run.err = QString::fromUtf8(p.readAllStandardError());
    return run;
}

// The options naming an OpenAI-compatible endpoint at `url` (model gpt-4o, key from KL_TEST_KEY).
inline QStringList openAiOptions(const QString& url)
{
    return { QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("--base-url"), url,
        QStringLiteral("--model"), QStringLiteral("gpt-4o"), QStringLiteral("--key-env"),
        QStringLiteral("KL_TEST_KEY") };
}

} // namespace kl::test
