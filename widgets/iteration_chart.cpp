#include "widgets/iteration_chart.h"

#include "widgets/string_conversion.h"

#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace kl::gui {

void addReadableAxis(QChart* chart, QAbstractAxis* axis, Qt::Alignment alignment)
{
    axis->setTruncateLabels(false);
    chart->addAxis(axis, alignment);
}

IterationChart::IterationChart(IterationSelection* selection, QWidget* parent)
    : QChartView(new QChart, parent)
    , m_selection(selection)
    , m_xAxis(new QValueAxis(this))
    , m_marker(new QLineSeries(this))
{
    setRenderHint(QPainter::Antialiasing);
    chart()->setMargins(QMargins(6, 6, 6, 6));
    // Beside the plot: below it, it took ~25 px of a chart that a 1366x768 window with a dock open
    // leaves ~170 px high, and the y axis title was elided ("Medi...").
    chart()->legend()->setAlignment(Qt::AlignRight);
    m_xAxis->setTitleText(tr("Iteration"));
    m_xAxis->setLabelFormat(QStringLiteral("%d"));
    addReadableAxis(chart(), m_xAxis, Qt::AlignBottom);
    QPen pen(QColor(0x33, 0x33, 0x33));
    pen.setWidthF(1.0);
    pen.setStyle(Qt::DashLine);
    m_marker->setPen(pen);
    //: chart legend: the vertical line at the selected iteration
    m_marker->setName(tr("selected"));
    // Small enough for a 1366x768 laptop with the review dock open; the splitters give more where there is room.
    setMinimumSize(300, 170);
}

void IterationChart::attach(QAbstractSeries* series, QAbstractAxis* yAxis)
{
    chart()->addSeries(series);
    series->attachAxis(m_xAxis);
    series->attachAxis(yAxis);
}

QXYSeries* IterationChart::pointSeries(qsizetype points)
{
    if (points > 400)
        return new QLineSeries(this);
    auto* scatter = new QScatterSeries(this);
    scatter->setMarkerSize(7);
    return scatter;
}

const figures::SizeFigures* IterationChart::sizeOf(const figures::IterationFigures& figures) const
{
    return figures.atSize(m_size);
}

void IterationChart::setNote(const QString& note)
{
    m_note = note;
    chart()->setTitle(note);
}

void IterationChart::showSession(const std::shared_ptr<const SessionView>& session)
{
    m_session = session;
    if (session
        && (m_size.empty() || std::find(session->sizes.begin(), session->sizes.end(), m_size) == session->sizes.end()))
        m_size = session->sizes.empty() ? std::string() : session->sizes.front();
    redraw();
}

void IterationChart::setSize(const std::string& size)
{
    m_size = size;
    redraw();
}

void IterationChart::clearSeries()
{
    if (m_marker->chart())
        chart()->removeSeries(m_marker); // not deleted: it is attached again after rebuild()
    chart()->removeAllSeries();
}

void IterationChart::setPoints(QXYSeries* series, const QList<QPointF>& points)
{
    const QList<QPointF> shown = series->points();
    if (shown.size() <= points.size() && std::equal(shown.begin(), shown.end(), points.begin())) {
        if (shown.size() < points.size())
            series->append(points.mid(shown.size()));
        return;
    }
    series->replace(points);
}

void IterationChart::redraw()
{
    setNote({});
    rebuild();
    const auto [first, last] = xRange();
    if (m_xAxis->type() == QAbstractAxis::AxisTypeValue) {
        // Ticks on whole iterations: 1, 2, 5 × 10^k apart, about ten of them. Never a moment with a
        // long range and a short interval: that draws a tick item per iteration.
        const double span = std::max(1.0, last - first);
        double interval = 1;
        for (double scale = 1; interval * 10 < span; scale *= 10)
            for (double step : { 1.0, 2.0, 5.0 })
                if (interval * 10 < span)
                    interval = step * scale;
        m_xAxis->setTickType(QValueAxis::TicksDynamic);
        m_xAxis->setTickAnchor(0);
        if (interval < m_xAxis->tickInterval())
            m_xAxis->setRange(first, last); // the old, wider interval over the new, shorter range first
        m_xAxis->setTickInterval(interval);
    }
    m_xAxis->setRange(first, last);
    if (QValueAxis* y = valueAxis(); y && !m_marker->chart()) {
        attach(m_marker, y);
        // The marker is drawn, not a series the reader looks up.
        for (QLegendMarker* legend : chart()->legend()->markers(m_marker))
            legend->setVisible(false);
    }
    moveMarker();
}

int IterationChart::iterationOfX(double x) const { return static_cast<int>(std::lround(x)); }

int IterationChart::lastIndex() const
{
    if (!m_session)
        return 0;
    const int rows = m_session->rows.empty() ? 0 : m_session->rows.back().index;
    const int figures = m_session->figures.empty() ? 0 : m_session->figures.back().index;
    return std::max(rows, figures);
}

std::pair<double, double> IterationChart::xRange() const
{
    const double last = std::max(1, lastIndex());
    return { 0.5, last + 0.5 };
}

void IterationChart::replaceIterationAxis(QValueAxis* axis)
{
    chart()->removeAxis(m_xAxis);
    m_xAxis->deleteLater();
    m_xAxis = axis;
    addReadableAxis(chart(), m_xAxis, Qt::AlignBottom);
}

void IterationChart::setRoundTicks(QValueAxis* axis, double low, double high)
{
    const double span = high > low ? high - low : 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(span / 5)));
    double interval = magnitude * 10;
    for (double step : { 5.0, 2.0, 1.0 })
        if (span / (step * magnitude) <= 7)
            interval = step * magnitude;
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    if (interval < axis->tickInterval())
        axis->setRange(low, high); // the old, wider interval over the new, shorter range first
    axis->setTickInterval(interval);
    axis->setRange(low, high);
    const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(interval) + 1e-9)));
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

void IterationChart::showIteration(const std::shared_ptr<const IterationFocus>&) { moveMarker(); }

void IterationChart::moveMarker()
{
    const int index = m_selection->current();
    QValueAxis* y = valueAxis();
    if (index <= 0 || !y || !m_marker->chart()) {
        m_marker->clear();
        return;
    }
    m_marker->replace({ QPointF(xOf(index), y->min()), QPointF(xOf(index), y->max()) });
}

int IterationChart::iterationAt(const QPoint& position) const
{
    if (!m_session || m_session->rows.empty() || !valueAxis())
        return 0;
    const QPointF scene = mapToScene(position);
    const QPointF inChart = chart()->mapFromScene(scene);
    if (!chart()->plotArea().contains(inChart))
        return 0;
    const QPointF value = chart()->mapToValue(inChart, m_marker);
    const int index = iterationOfX(value.x());
    return m_session->row(index) ? index : 0;
}

QPoint IterationChart::positionOf(int iteration) const
{
    double y = valueAxis() ? (valueAxis()->min() + valueAxis()->max()) / 2 : 0.0;
    if (m_session)
        if (const figures::IterationFigures* f = m_session->figuresOf(iteration))
            if (const auto v = valueOf(*f))
                y = *v;
    const QPointF inChart = chart()->mapToPosition(QPointF(xOf(iteration), y), m_marker);
    return mapFromScene(chart()->mapToScene(inChart));
}

void IterationChart::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton)
        if (const int index = iterationAt(event->position().toPoint()); index > 0) {
            m_selection->select(index);
            event->accept();
            return;
        }
    QChartView::mousePressEvent(event);
}

// The chart laid out at the export size with the title over it, drawn by `draw`, then as it was on screen.
template <typename Draw> bool drawnForExport(IterationChart& view, const QString& title, Draw&& draw)
{
    QChart* chart = view.chart();
    const QSize shown = view.QWidget::size(); // size() is the main size drawn
    const QString shownTitle = chart->title();
    const QFont shownFont = chart->titleFont();
    QFont font = shownFont;
    font.setBold(true);
    font.setPointSizeF(std::max(12.0, shownFont.pointSizeF() * 1.4));
    chart->setTitleFont(font);
    chart->setTitle(title);
    view.resize(IterationChart::kExportSize);
    const bool drawn = draw();
    chart->setTitle(shownTitle);
    chart->setTitleFont(shownFont);
    view.resize(shown);
    return drawn;
}

QImage IterationChart::exportImage(const QString& title)
{
    QImage image(kExportSize, QImage::Format_ARGB32);
    image.fill(Qt::white);
    drawnForExport(*this, title, [&] {
        QPainter painter(&image); // logical pixels: the same size on a 2x screen
        render(&painter);
        return true;
    });
    return image;
}

bool IterationChart::savePng(const QString& path, const QString& title) { return exportImage(title).save(path, "PNG"); }

bool IterationChart::saveSvg(const QString& path, const QString& title)
{
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(kExportSize);
    generator.setViewBox(QRect(QPoint(0, 0), kExportSize));
    generator.setTitle(title.isEmpty() ? tr("KernelLoop chart") : title);
    return drawnForExport(*this, title, [&] {
        QPainter painter;
        if (!painter.begin(&generator))
            return false;
        render(&painter);
        return painter.end();
    });
}

} // namespace kl::gui
