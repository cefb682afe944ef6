#pragma once

// Latency percentiles (p50, p99, p99.9, max) per strategy, acquire and release side by side, on a
// log axis: a lock's p50 and its max differ by three orders of magnitude. Below them, the whole
// acquire distribution of each run from its latency-acquire.hgrm, as HdrHistogram's plotter
// draws it: latency against 1/(1-percentile) (10 = p90, 100 = p99, 1000 = p99.9), and for a run
// at a rate the same from when each arrival was due (dashed).

#include <vector>

#include <QWidget>

#include "dashboard/results_model.hpp"

class QChart;
class QChartView;

namespace lockbench::dashboard {

class LatencyView : public QWidget {
    Q_OBJECT

  public:
    explicit LatencyView(QWidget* parent = nullptr);

    void setRuns(const std::vector<const Run*>& runs, const QString& title);

    QChart* acquireChart() const { return acquire_; }
    QChart* releaseChart() const { return release_; }
    QChart* distributionChart() const { return distribution_; }

    static const QStringList& categories();

  private:
    QChart* acquire_;
    QChart* release_;
    QChart* distribution_;
};

}  // namespace lockbench::dashboard
