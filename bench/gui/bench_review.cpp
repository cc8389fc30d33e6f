// Times the review workspace on a synthetic store: open to first paint (the session list, the
// history table, the selected iteration's panels), the background read of every iteration's
// chart figures, a selection change (every panel follows) and a redraw of each chart.
#include "app/review_workspace.h"
#include "synthetic_store.h"
#include "widgets/bandwidth_chart.h"
#include "widgets/charts_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/latency_chart.h"
#include "widgets/resources_chart.h"
#include "widgets/stall_chart.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace kl::gui;

namespace {

double millis(const QElapsedTimer& timer) { return static_cast<double>(timer.nsecsElapsed()) / 1e6; }

struct Spread {
    double median = 0, worst = 0;
};

Spread spreadOf(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    return { samples[samples.size() / 2], samples.back() };
}

} // namespace

int main(int argc, char* argv[])
{
    QApplication app(argc, argv);
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 10000;
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("bench.db"));

    QElapsedTimer timer;
    timer.start();
    kl::testing::writeSyntheticStore(file.toStdString(), iterations);
    std::printf("synthetic store: %d iterations written in %.0f ms\n", iterations, millis(timer));

    {
        // What the open costs before any widget: the listing rows and the proposal parents.
        timer.restart();
        const auto document = StoreDocument::open(file);
        const auto sessions = document->sessions();
        const double listed = millis(timer);
        const auto view = document->session(sessions.front().session.id);
        std::printf("store read: sessions listed in %.0f ms, %zu iteration rows and parents in %.0f ms\n", listed,
            view->rows.size(), millis(timer) - listed);
        // The charts' figures: batched (what the workspace reads) against one Store::iteration() each.
        timer.restart();
        const auto batched = kl::figures::readFigures(document->store(), view->session.id);
        const double batchedMillis = millis(timer);
        timer.restart();
        std::size_t oneByOne = 0;
        for (const auto& row : view->rows)
            if (const auto detail = document->store().iteration(view->session.id, row.index))
                oneByOne += kl::figures::figuresOf(*detail).sizes.size();
        std::printf("chart figures of %zu iterations: %.0f ms in batched queries, %.0f ms read one by one\n",
            batched.size(), batchedMillis, millis(timer));
    }

    ReviewWorkspace review;
    review.resize(1600, 1000);
    review.show();
    QApplication::processEvents();

    QSignalSpy figures(&review, &ReviewWorkspace::figuresShown);
    timer.restart();
    review.openStore(file);
    const double opened = millis(timer);
    review.repaint();
    const double firstPaint = millis(timer);
    std::printf("openStore %.0f ms, then the first repaint %.0f ms\n", opened, firstPaint - opened);
    if (qEnvironmentVariableIsSet("KL_BENCH_OPEN_ONLY"))
        return 0;
    figures.wait(120000);
    const double figuresRead = millis(timer);
    review.repaint();
    std::printf("open to first paint: %.0f ms (target < 1000)\n", firstPaint);
    std::printf("open to charts drawn (figures read on a worker thread): %.0f ms\n", figuresRead);

    std::vector<double> selections;
    for (int k = 1; k <= 25; ++k) {
        const int index = 1 + (k * 7919) % iterations;
        timer.restart();
        review.selection()->select(index);
        review.repaint();
        selections.push_back(millis(timer));
    }
    const Spread select = spreadOf(selections);
    std::printf(
        "selection change (every panel follows, repainted): median %.1f ms, worst %.1f ms over %zu (target < 50)\n",
        select.median, select.worst, selections.size());

    ChartsPanel* charts = review.charts();
    for (IterationChart* chart :
        { static_cast<IterationChart*>(charts->latency()), static_cast<IterationChart*>(charts->bandwidth()),
            static_cast<IterationChart*>(charts->stalls()), static_cast<IterationChart*>(charts->resources()) }) {
        charts->tabs()->setCurrentWidget(chart);
        std::vector<double> redraws;
        for (int k = 0; k < 5; ++k) {
            timer.restart();
            chart->redraw();
            chart->repaint();
            redraws.push_back(millis(timer));
        }
        const Spread redraw = spreadOf(redraws);
        std::printf("chart redraw, %s tab: median %.1f ms, worst %.1f ms (target < 100)\n",
            qPrintable(charts->tabs()->tabText(charts->tabs()->currentIndex())), redraw.median, redraw.worst);
    }
    return 0;
}
