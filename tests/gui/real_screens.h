#pragma once
// The offscreen platform's screens as the issue-28 tests mean them: a 1366x768 laptop, and a
// 1920x1080 monitor to its right (its default single 800x600 screen made Qt place and size the
// window for a screen smaller than both). A window moved to x >= 1366 is on the monitor.
#include <QApplication>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

namespace kl::test {

template <typename Test> int runOnRealScreens(int argc, char** argv)
{
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("screens.json"));
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly))
        return 1;
    file.write(R"({"screens": [
        {"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1},
        {"name": "monitor", "x": 1366, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}
    ]})");
    file.close();
    if (qEnvironmentVariable("QT_QPA_PLATFORM") == QLatin1String("offscreen"))
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    QApplication app(argc, argv);
    Test test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

} // namespace kl::test
