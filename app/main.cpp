// kernelloop: the desktop workbench. `kernelloop [FILE] [--db STORE] [--screenshot PNG ...]`.
// FILE is a problem, a store or a recorded .klsession; without one the store of --db,
// $KERNELLOOP_DB or the default store opens for review when it exists.
#include "app/main_window.h"
#include "app/review_state.h"
#include "app/review_workspace.h"
#include "core/store/store_location.h"
#include "widgets/string_conversion.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QPixmap>
#include <QTimer>
#include <QTranslator>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string_view>

namespace {

// A screenshot run gives up after this long without an analysis (e.g. a wedged compiler).
constexpr int kScreenshotTimeoutMillis = 120000;

void installTranslators(QCoreApplication& app)
{
    auto* qtTranslator = new QTranslator(&app);
    if (qtTranslator->load(QLocale(), QStringLiteral("qtbase"), QStringLiteral("_"),
            QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qtTranslator);
    // English is the fallback: its file holds the plural forms the source text writes as "(s)".
    auto* translator = new QTranslator(&app);
    if (translator->load(QLocale(), QStringLiteral("kernelloop"), QStringLiteral("_"), QStringLiteral(":/i18n"))
        || translator->load(QStringLiteral(":/i18n/kernelloop_en")))
        QCoreApplication::installTranslator(translator);
}

void setIdentity(QCoreApplication& app)
{
    QCoreApplication::setApplicationName(QStringLiteral("KernelLoop"));
    QCoreApplication::setOrganizationName(QStringLiteral("KernelLoop"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KL_VERSION));
    installTranslators(app);
}

// The command line; built once an application object exists (the texts are translated).
struct CommandLine {
    QCommandLineParser parser;
    const QCommandLineOption db { QStringLiteral("db"),
        QCoreApplication::translate(
            "main", "The session store to review (default: $KERNELLOOP_DB or the default store)."),
        QCoreApplication::translate("main", "store") };
    const QCommandLineOption screenshot { QStringLiteral("screenshot"),
        QCoreApplication::translate(
            "main", "Save a PNG of the window once the first analysis (or session) is shown, then quit."),
        QCoreApplication::translate("main", "file") };
    // For screenshots of each state of the review workspace.
    const QCommandLineOption iteration { QStringLiteral("iteration"),
        QCoreApplication::translate("main", "Select this iteration of the opened session."), QStringLiteral("N") };
    const QCommandLineOption inspector { QStringLiteral("inspector"),
        QCoreApplication::translate("main", "Show this inspector tab (Source, Diff, Verification, Metrics, ...)."),
        QStringLiteral("tab") };
    const QCommandLineOption chart { QStringLiteral("chart"),
        QCoreApplication::translate("main", "Show this chart tab (Latency, Bandwidth, ...)."), QStringLiteral("tab") };
    const QCommandLineOption history { QStringLiteral("history"),
        QCoreApplication::translate("main", "Show the history as this tab (Iterations, Proposal tree or Hypotheses)."),
        QStringLiteral("tab") };

    CommandLine()
    {
        parser.setApplicationDescription(
            QCoreApplication::translate("main", "A workbench for closed-loop CUDA kernel optimisation."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("file"),
            QCoreApplication::translate(
                "main", "A problem file (problem.json), a store or a recorded .klsession to open."),
            QStringLiteral("[file]"));
        parser.addOptions({ db, screenshot, iteration, inspector, chart, history });
    }
};

// --help and --version only print: they must work where no display is (an ssh session, a package
// check), so they are answered before a QApplication opens the window system.
bool onlyPrints(int argc, char* argv[])
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view argument = argv[i];
        if (argument == "--")
            return false;
        if (argument == "-h" || argument == "-?" || argument == "--help" || argument == "--help-all" || argument == "-v"
            || argument == "--version")
            return true;
    }
    return false;
}

// A refused option value, one line each on stderr.
void refuse(const QStringList& refusals)
{
    for (const QString& refusal : refusals)
        std::fprintf(stderr, "kernelloop: %s\n", qPrintable(refusal));
}

// What a screenshot shows, on stdout for the screenshot tests to compare with what they asked for
// (tests/gui/screenshot_option.cmake): "shown workspace: Review", "shown iteration: 6", ...
void printShown(const kl::gui::MainWindow& window, const QString& screenshot, const QStringList& lines)
{
    const bool review = window.currentWorkspace() == kl::gui::MainWindow::Workspace::Review;
    std::printf("kernelloop: screenshot %s\n", qPrintable(screenshot));
    std::printf("shown workspace: %s\n", review ? "Review" : "Editor");
    for (const QString& line : lines)
        std::printf("shown %s\n", qPrintable(line));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char* argv[])
{
    if (onlyPrints(argc, argv)) {
        QCoreApplication console(argc, argv);
        setIdentity(console);
        CommandLine line;
        line.parser.process(console); // prints, then exits (0, or 1 for a bad option)
        return 1;
    }
    QApplication app(argc, argv);
    setIdentity(app);
    QApplication::setDesktopFileName(QStringLiteral(KL_APP_ID));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kernelloop.png")));

    CommandLine line;
    QCommandLineParser& parser = line.parser;
    const QCommandLineOption& dbOption = line.db;
    const QCommandLineOption& screenshotOption = line.screenshot;
    const QCommandLineOption& iterationOption = line.iteration;
    const QCommandLineOption& inspectorOption = line.inspector;
    const QCommandLineOption& chartOption = line.chart;
    const QCommandLineOption& historyOption = line.history;
    parser.process(app);

    kl::gui::MainWindow window;
    const QString screenshot = parser.value(screenshotOption);
    const QStringList arguments = parser.positionalArguments();
    QString file = arguments.isEmpty() ? QString() : arguments.first();
    if (file.isEmpty()) {
        // --db, $KERNELLOOP_DB, the default store: opened for review when there is one.
        const auto store = kl::store::storeLocation(kl::gui::toStdString(parser.value(dbOption)));
        if (parser.isSet(dbOption) || std::filesystem::exists(store))
            file = kl::gui::toQString(store.string());
    }
    const bool reviewing = !file.isEmpty() && kl::gui::isStoreFile(file);

    // The review state asked for: a name no tab has, or an iteration the session lacks, is refused
    // (review_state.h) rather than shown as whatever was there.
    kl::gui::ReviewRequest request;
    auto asked = [&parser](const QCommandLineOption& option) {
        return parser.isSet(option) ? std::optional<QString>(parser.value(option)) : std::nullopt;
    };
    request.iteration = asked(iterationOption);
    request.inspector = asked(inspectorOption);
    request.chart = asked(chartOption);
    request.history = asked(historyOption);
    kl::gui::ReviewWorkspace* review = window.review();
    QStringList refused = kl::gui::refusedTabs(*review, request);
    if (!request.isEmpty() && !reviewing)
        refused << QCoreApplication::translate("main",
            "--iteration, --inspector, --chart and --history choose what a store or a .klsession shows; "
            "no store or .klsession is opened");
    if (!refused.isEmpty()) {
        refuse(refused);
        return 2;
    }
    auto applyReviewState = [review, request] {
        const QStringList refusedNow = kl::gui::applyReviewRequest(*review, request);
        if (refusedNow.isEmpty())
            return true;
        refuse(refusedNow);
        QApplication::exit(2);
        return false;
    };

    if (!screenshot.isEmpty()) {
        // A fixed size, so that screenshots for docs and CI do not depend on the last session.
        window.resize(1600, 1000);
        auto save = [&window, screenshot] {
            const bool saved = window.grab().save(screenshot, "PNG");
            if (!saved)
                std::fprintf(stderr, "kernelloop: cannot write %s\n", qPrintable(screenshot));
            const auto problem = window.problem();
            printShown(window, screenshot,
                { QStringLiteral("problem: %1").arg(problem ? kl::gui::toQString(problem->name) : QString()),
                    QStringLiteral("status: %1").arg(window.statusText().simplified()) });
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

    if (reviewing) {
        if (!screenshot.isEmpty()) {
            QObject::disconnect(&window, &kl::gui::MainWindow::analysisShown, nullptr, nullptr);
            QObject::connect(
                review, &kl::gui::ReviewWorkspace::figuresShown, &app,
                [&, screenshot] {
                    if (!applyReviewState())
                        return;
                    QTimer::singleShot(200, &app, [&window, review, screenshot] {
                        const bool saved = window.grab().save(screenshot, "PNG");
                        // What the picture shows, for the screenshot tests to compare with what they asked.
                        printShown(window, screenshot, kl::gui::describeReview(*review));
                        QApplication::exit(saved ? 0 : 1);
                    });
                },
                Qt::SingleShotConnection);
        }
        const bool opened = window.openStore(file);
        if (opened && !review->hasSession() && !screenshot.isEmpty())
            QTimer::singleShot(
                0, &app, [&window, screenshot] { QApplication::exit(window.grab().save(screenshot, "PNG") ? 0 : 2); });
        if (!opened && !screenshot.isEmpty())
            QTimer::singleShot(0, &app, [&window, screenshot] {
                window.grab().save(screenshot, "PNG");
                QApplication::exit(2);
            });
        if (opened && screenshot.isEmpty())
            QObject::connect(
                review, &kl::gui::ReviewWorkspace::figuresShown, &app, applyReviewState, Qt::SingleShotConnection);
    } else if (!file.isEmpty()) {
        const bool opened = window.openProblem(file);
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
