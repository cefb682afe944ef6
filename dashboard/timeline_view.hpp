#pragma once

// The lock-hold timeline of one run: a row per process, a bar per hold (coloured by key or by
// strategy), holds that overlap a conflicting hold on the same key in red, nemesis events as
// vertical marks and fault windows shaded. Only the visible rows and time window are turned into
// scene items, at most about one bar per pixel (level_of_detail.hpp), so a 1 M-event run pans and
// zooms as smoothly as a small one.
//
// Wheel zooms around the cursor, drag pans, Shift+wheel scrolls rows, Home or a double-click
// shows everything.

#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include <QGraphicsView>
#include <QStringList>

#include "dashboard/history_model.hpp"
#include "dashboard/results_model.hpp"

namespace lockbench::dashboard {

class TimelineView : public QGraphicsView {
    Q_OBJECT

  public:
    enum class ColorBy { key, strategy };
    // Item kinds, in QGraphicsItem::data(kKindRole), for tests and tooltips.
    static constexpr int kKindRole = 0;
    enum Kind { bar = 1, overlap_bar, nemesis_mark, fault_window, row_label, axis };
    static constexpr int kRowHeight = 18;
    static constexpr int kLabelWidth = 72;
    static constexpr int kAxisHeight = 34;

    explicit TimelineView(QWidget* parent = nullptr);

    // keep_window: a live update keeps the user's zoom, or keeps following the end.
    void setTimeline(std::shared_ptr<const Timeline> timeline, const QString& strategy,
                     std::vector<FaultWindow> faults, bool keep_window = false);
    void clearTimeline(const QString& message);
    const Timeline* timeline() const { return timeline_.get(); }

    void setColorBy(ColorBy c);
    ColorBy colorBy() const { return color_by_; }

    void setTimeWindow(std::int64_t t0, std::int64_t t1);
    std::pair<std::int64_t, std::int64_t> timeWindow() const { return {t0_, t1_}; }
    void showAll();
    // Zooms to [t0, t1] with a margin, highlights the rows of `processes` and scrolls to them.
    void zoomTo(std::int64_t t0, std::int64_t t1, const std::vector<std::int64_t>& processes);
    void zoomToOverlap(std::size_t overlap_index);

    // What the last rebuild drew.
    int barCount() const { return bars_; }
    int redBarCount() const { return red_bars_; }
    int nemesisMarkCount() const { return nemesis_marks_; }
    const std::set<std::int64_t>& highlighted() const { return highlighted_; }

    // Scene x of a time, for tests that check where something was drawn.
    double xOf(std::int64_t t) const;

  signals:
    void timeWindowChanged(std::int64_t t0, std::int64_t t1);

  protected:
    void resizeEvent(QResizeEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;

  private:
    void rebuild();
    // rebuild's steps, each over the visible rows' span (top to bottom, in scene coordinates).
    void drawFaultWindows(double top, double bottom);
    void drawRow(std::size_t row);
    void drawNemesisMarks(double top, double bottom);
    void drawTimeAxis(double top, double bottom);
    // xOf(t) kept within the plot, left of it the row labels.
    double plotX(std::int64_t t) const;
    void updateSceneRect();
    double plotWidth() const;
    std::int64_t timeAt(double x) const;
    void zoomAround(double x, double factor);
    void panBy(double dx);
    QColor keyColor(std::int32_t key) const;

    QGraphicsScene* scene_;
    std::shared_ptr<const Timeline> timeline_;
    std::vector<FaultWindow> faults_;
    QString strategy_;
    QString message_;
    ColorBy color_by_ = ColorBy::key;
    std::int64_t t0_ = 0;
    std::int64_t t1_ = 1;
    bool following_ = true;  // the window shows everything, so live updates extend it
    std::set<std::int64_t> highlighted_;
    int bars_ = 0;
    int red_bars_ = 0;
    int nemesis_marks_ = 0;
    bool dragging_ = false;
    double drag_x_ = 0;
};

// Formats ns since run start for tooltips ("1.250 s", "12.5 ms", "830 µs").
QString format_ns(std::int64_t ns);

// The labels of an axis from t0 to t1 with ticks every `step` ns, all in one unit chosen from the
// axis range (never "0 ns", "500.0 ms", "1.000 s" on one axis), with as many decimals as the step
// needs.
QStringList axis_labels(std::int64_t t0, std::int64_t t1, std::int64_t step);

}  // namespace lockbench::dashboard
