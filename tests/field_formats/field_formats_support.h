#pragma once
// What the field-format suites share: kernelloop-cli as a real process, every file's bytes under a
// folder, and the bundled sessions imported into a scratch store.
#include "core/store/store.h"
#include "tests/test_files.h"

#include <QProcess>
#include <QString>
#include <QStringList>

#include <filesystem>
#include <string>
#include <vector>

namespace kl::test {

struct CliRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

inline CliRun runCli(const QStringList& arguments, const std::vector<std::pair<QString, QString>>& env = {})
{
    QProcess process;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("KERNELLOOP_DB"));
    for (const auto& [name, value] : env)
        environment.insert(name, value);
    process.setProcessEnvironment(environment);
    process.start(QStringLiteral(KL_CLI_PATH), arguments);
    CliRun run;
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        run.err = "timed out";
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = process.readAllStandardOutput().toStdString();
    run.err = process.readAllStandardError().toStdString();
    return run;
}

// Every regular file under `dir` (or `dir` itself when it is a file), with its bytes.
inline std::vector<std::pair<std::string, std::string>> filesUnder(const std::filesystem::path& dir)
{
    std::vector<std::pair<std::string, std::string>> files;
    if (std::filesystem::is_regular_file(dir))
        return { { dir.string(), readText(dir.string()) } };
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            files.emplace_back(e.path().string(), readText(e.path().string()));
    return files;
}

inline std::vector<std::filesystem::path> bundledSessions()
{
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(sourceDir() + "/resources/sessions"))
        if (e.path().extension() == ".klsession")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

// `check` accepted the problem: exit 0, or (where this machine's Python has no Triton) the problem and
// its reference loaded and only the Triton baseline could not be compiled here, as for the bundled
// examples themselves.
inline bool checkAccepted(const CliRun& run, std::string* why = nullptr)
{
    if (run.exitCode == 0)
        return true;
    const auto all = run.out + run.err;
    std::size_t errors = 0, tritonMissing = 0;
    for (std::size_t at = all.find("error ["); at != std::string::npos; at = all.find("error [", at + 1)) {
        ++errors;
        if (all.compare(at, 28, "error [compile.needs-triton]") == 0
            || all.compare(at, 20, "error [needs-triton]") == 0)
            ++tritonMissing;
    }
    if (why)
        *why = all;
    return errors > 0 && errors == tritonMissing;
}

} // namespace kl::test
