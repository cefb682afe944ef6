#pragma once

// Latency percentiles (p50, p99, p99.9, max) per strategy, acquire and release side by side, on a
// log axis: a lock's p50 and its max differ by three orders of magnitude.

#include <vector>

#include <QWidget>

#include "results_model.hpp"

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

    static const QStringList& categories();

  private:
    QChart* acquire_;
    QChart* release_;
};

}  // namespace lockbench::dashboard
