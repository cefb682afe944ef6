#pragma once

// Throughput over time, one line per strategy, with the scenario's fault windows shaded and named
// in the legend, so a dip lines up with the fault that caused it.

#include <vector>

#include <QWidget>

#include "dashboard/results_model.hpp"

class QChart;
class QChartView;
class QValueAxis;

namespace lockbench::dashboard {

class ThroughputView : public QWidget {
    Q_OBJECT

  public:
    explicit ThroughputView(QWidget* parent = nullptr);

    // Runs without a summary (in progress, broken) are skipped.
    void setRuns(const std::vector<const Run*>& runs, const QString& title);

    QChart* chart() const { return chart_; }
    QChartView* chartView() const { return view_; }
    QValueAxis* axisX() const { return x_; }
    QValueAxis* axisY() const { return y_; }
    int lineCount() const { return lines_; }
    int faultWindowCount() const { return faults_; }

  private:
    void resetAxes(const QString& title);
    void setRanges(const std::vector<const Run*>& runs);
    // Shaded over the whole (rounded) height: after setRanges, before the lines.
    void addFaultWindows(const std::vector<const Run*>& runs);
    void addLine(const SummaryView& summary);

    QChart* chart_;
    QChartView* view_;
    QValueAxis* x_ = nullptr;
    QValueAxis* y_ = nullptr;
    int lines_ = 0;
    int faults_ = 0;
};

}  // namespace lockbench::dashboard
