// kernelloop: the desktop workbench. `kernelloop [PROBLEM] [--screenshot FILE]`.
#include "app/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLibraryInfo>
#include <QLocale>
#include <QPixmap>
#include <QTimer>
#include <QTranslator>

#include <cstdio>

namespace {

// A screenshot run gives up after this long without an analysis (e.g. a wedged compiler).
constexpr int kScreenshotTimeoutMillis = 120000;

void installTranslators(QApplication& app)
{
    auto* qtTranslator = new QTranslator(&app);
    if (qtTranslator->load(QLocale(), QStringLiteral("qtbase"), QStringLiteral("_"),
            QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(qtTranslator);
    // English is the fallback: its file holds the plural forms the source text writes as "(s)".
    auto* translator = new QTranslator(&app);
    if (translator->load(QLocale(), QStringLiteral("kernelloop"), QStringLiteral("_"), QStringLiteral(":/i18n"))
        || translator->load(QStringLiteral(":/i18n/kernelloop_en")))
        QApplication::installTranslator(translator);
}

} // namespace

int main(int argc, char* argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("KernelLoop"));
    QApplication::setOrganizationName(QStringLiteral("KernelLoop"));
    QApplication::setApplicationVersion(QStringLiteral(KL_VERSION));
    QApplication::setDesktopFileName(QStringLiteral(KL_APP_ID));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kernelloop.png")));
    installTranslators(app);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QApplication::translate("main", "A workbench for closed-loop CUDA kernel optimisation."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("problem"),
        QApplication::translate("main", "A problem file (problem.json) to open."), QStringLiteral("[problem]"));
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
        QApplication::translate("main", "Save a PNG of the window once the first analysis is shown, then quit."),
        QApplication::translate("main", "file"));
    parser.addOption(screenshotOption);
    parser.process(app);

    kl::gui::MainWindow window;
    const QString screenshot = parser.value(screenshotOption);
    if (!screenshot.isEmpty()) {
        // A fixed size, so that screenshots for docs and CI do not depend on the last session.
        window.resize(1600, 1000);
        auto save = [&window, screenshot] {
            const bool saved = window.grab().save(screenshot, "PNG");
            if (!saved)
                std::fprintf(stderr, "kernelloop: cannot write %s\n", qPrintable(screenshot));
            QApplication::exit(saved ? 0 : 1);
        };
        QObject::connect(
            &window, &kl::gui::MainWindow::analysisShown, &app, [save] { QTimer::singleShot(0, save); },
            Qt::SingleShotConnection);
        QTimer::singleShot(kScreenshotTimeoutMillis, &app, [] {
            std::fprintf(stderr, "kernelloop: no analysis finished in time for the screenshot\n");
            QApplication::exit(1);
        });
    }
    window.show();

    const QStringList arguments = parser.positionalArguments();
    if (!arguments.isEmpty()) {
        const bool opened = window.openProblem(arguments.first());
        if (!opened && !screenshot.isEmpty()) {
            // Nothing will be analysed: show the error as it is.
            QTimer::singleShot(0, &app, [&window, screenshot] {
                window.grab().save(screenshot, "PNG");
                QApplication::exit(2);
            });
        }
    } else if (!screenshot.isEmpty()) {
        QTimer::singleShot(
            0, &app, [&window, screenshot] { QApplication::exit(window.grab().save(screenshot, "PNG") ? 0 : 1); });
    }
    return app.exec();
}
