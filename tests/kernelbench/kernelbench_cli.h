#pragma once
// The real kernelloop-cli's import-kernelbench, run as a process with Debian's CPU PyTorch
// (/usr/bin/python3; python3 on PATH may be a Python without torch).
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include "core/model/expression.h"
#include "core/model/problem.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kbtest {

// A tensor's shape at one size set, and its rows (every dimension but the last): how the runner's worker
// is given a problem's tensors.
inline std::vector<std::int64_t> shapeAt(const kl::TensorSpec& t, const kl::SizeSet& sizes)
{
    std::vector<std::int64_t> shape;
    for (const auto& d : t.shape)
        shape.push_back(kl::evaluateInteger(d, sizes.symbols()));
    return shape;
}

inline std::int64_t rowsOf(const std::vector<std::int64_t>& shape)
{
    std::int64_t rows = 1;
    for (std::size_t i = 0; i + 1 < shape.size(); ++i)
        rows *= shape[i];
    return rows;
}

inline const char* kPython = "/usr/bin/python3";

inline bool hasTorch()
{
    return std::filesystem::exists(kPython)
        && std::system((std::string(kPython) + " -c 'import torch' 2>/dev/null").c_str()) == 0;
}

struct CliRun {
    int exitCode = -1; // -1: did not finish in time or crashed
    QString out;
    QString err;
};

inline CliRun runCli(const QStringList& arguments, const QString& python = QString::fromUtf8(kPython))
{
    QProcess cli;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("KL_PYTHON"), python);
    cli.setProcessEnvironment(environment);
    cli.setWorkingDirectory(QStringLiteral(KL_SOURCE_DIR));
    cli.start(QStringLiteral(KL_CLI_PATH), arguments);
    CliRun run;
    if (!cli.waitForFinished(120000) || cli.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = cli.exitCode();
    run.out = QString::fromUtf8(cli.readAllStandardOutput());
    run.err = QString::fromUtf8(cli.readAllStandardError());
    return run;
}

inline CliRun importKernelBench(const QString& file, const QString& dir, QStringList more = {})
{
    QStringList arguments { QStringLiteral("import-kernelbench"), file, QStringLiteral("-o"), dir };
    return runCli(arguments + more);
}

inline QString writeText(const QString& path, const QByteArray& text)
{
    QFile out(path);
    if (out.open(QIODevice::WriteOnly))
        out.write(text);
    return path;
}

inline QByteArray readText(const QString& path)
{
    QFile in(path);
    return in.open(QIODevice::ReadOnly) ? in.readAll() : QByteArray();
}

} // namespace kbtest
