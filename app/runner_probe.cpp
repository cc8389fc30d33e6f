#include "app/runner_probe.h"

#include "core/model/error.h"
#include "core/runnerclient/runner_client.h"
#include "widgets/string_conversion.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStringList>

namespace kl::gui {

QString windowRunnerPath()
{
    if (const QString env = qEnvironmentVariable("KERNELLOOP_RUNNER"); !env.isEmpty())
        return env;
    const QString dir = QCoreApplication::applicationDirPath();
    const QStringList candidates { dir + QStringLiteral("/kernelloop-runner"),
        dir + QStringLiteral("/../runner/kernelloop-runner") };
    for (const QString& candidate : candidates)
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    return dir + QStringLiteral("/kernelloop-runner");
}

QString probeRunnerAt(const std::string& path)
{
    try {
        RunnerConfig config;
        config.path = path;
        RunnerClient runner(config);
        const auto hello = runner.start();
        runner.shutdown();
        return hello.deviceOk ? QString() : toQString(kNoDevicePrefix + hello.detail);
    } catch (const Error& e) {
        return QStringLiteral("lost:") + toQString(e.message());
    }
}

} // namespace kl::gui
