#pragma once
// A chart over a session's iterations (x: iteration index) that follows the selection: it marks
// the selected iteration, selects the iteration nearest to a click, draws one main size at a time
// and exports as PNG or SVG at a fixed size with a title. Subclasses draw their series in rebuild().
#include "widgets/iteration_selection.h"

#include <QImage>
#include <QList>
#include <QPointF>
#include <QSize>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include <string>

class QLineSeries;
class QXYSeries;
class QValueAxis;

namespace kl::gui {

// Adds `axis` to `chart` with labels that are never elided: Qt Charts sizes an axis for its labels
// when it is laid out, and after the range changed in a live session (77-78.5 us, then 51-77 us) its
// tick labels read "..." (the GUI on the H100, 2026-12-05).
void addReadableAxis(QChart* chart, QAbstractAxis* axis, Qt::Alignment alignment);

class IterationChart : public QChartView, public IterationViewer {
    Q_OBJECT
public:
    IterationChart(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    // The main size whose figures are drawn (never two at once); empty: the first timed one.
    void setSize(const std::string& size);
    const std::string& size() const { return m_size; }

    // Exports are drawn at one fixed size, whatever the chart's size on screen (a screen-sized PNG
    // differed on every machine), with `title` above the chart (what it shows: problem, session, size).
    static constexpr QSize kExportSize { 1600, 1000 };
    QImage exportImage(const QString& title);
    bool savePng(const QString& path, const QString& title);
    bool saveSvg(const QString& path, const QString& title);
    // What the chart says about the data it cannot draw ("no stall profile ..."); empty otherwise.
    QString note() const { return m_note; }
    // The iteration nearest to a point in widget coordinates, 0 when none is near.
    int iterationAt(const QPoint& position) const;
    // A point (widget coordinates) where the iteration is drawn, for tests and tooltips.
    QPoint positionOf(int iteration) const;
    // Redraws from the session value; returns how many iterations were drawn.
    void redraw();

protected:
    // Draws the series for m_session at m_size. The x axis is set from the drawn range.
    virtual void rebuild() = 0;
    // The y value at which an iteration is drawn (for the marker and click mapping); nullopt when
    // not drawn.
    virtual std::optional<double> valueOf(const figures::IterationFigures& figures) const = 0;
    virtual QValueAxis* valueAxis() const = 0;
    // Where an iteration sits on the x axis and back; charts that draw a window of iterations
    // (stall bars) place them by position instead of by index.
    virtual double xOf(int iteration) const { return iteration; }
    virtual int iterationOfX(double x) const;
    virtual std::pair<double, double> xRange() const;
    // Removes (and deletes) the subclass's series, before drawing them anew; the marker stays.
    void clearSeries();
    // A series' points made `points`: the new tail appended when the series holds the head already
    // (a live session's refresh adds iterations at the end), else all replaced.
    static void setPoints(QXYSeries* series, const QList<QPointF>& points);
    // Puts another axis (e.g. one labelled by category) where the iteration axis was.
    void replaceIterationAxis(QValueAxis* axis);
    // A value axis over [low, high] whose ticks fall on round numbers (1, 2, 5 × 10^k apart, about
    // five of them) with as many decimals as the interval needs: QValueAxis's own ticks divide the
    // range evenly and read 27, 54, 81.
    static void setRoundTicks(QValueAxis* axis, double low, double high);

    void mousePressEvent(QMouseEvent* event) override;

    QValueAxis* iterationAxis() const { return m_xAxis; }
    // The last iteration the session value knows of, from its rows or its figures: the two are read
    // apart, and a live session's figures may already hold an iteration its rows do not (0: none).
    int lastIndex() const;
    const figures::SizeFigures* sizeOf(const figures::IterationFigures& figures) const;
    void setNote(const QString& note);
    void attach(QAbstractSeries* series, QAbstractAxis* yAxis);
    // A series for a chart's points: markers while there are few enough to draw one graphics item
    // each (up to 400), a line beyond that: markers would cover each other.
    QXYSeries* pointSeries(qsizetype points);

    IterationSelection* m_selection;
    std::shared_ptr<const SessionView> m_session;
    std::string m_size;

private:
    void moveMarker();

    QValueAxis* m_xAxis;
    QLineSeries* m_marker;
    QString m_note;
};

} // namespace kl::gui
