#pragma once

// A ramp's curves (`lockbench run --clients-ramp`): throughput, acquire p99 and fairness (Jain's
// index) against the number of clients, one line per strategy, so where a lock stops scaling -
// or starts starving clients - is one look.

#include <functional>
#include <optional>

#include <QWidget>

#include "dashboard/results_model.hpp"

class QChart;
class QLabel;
class QValueAxis;

namespace lockbench::dashboard {

class ScalabilityView : public QWidget {
    Q_OBJECT

  public:
    explicit ScalabilityView(QWidget* parent = nullptr);

    // Draws `ramp` (nullptr: says there is none, and how to make one).
    void setRamp(const Ramp* ramp);

    QChart* throughputChart() const { return throughput_; }
    QChart* latencyChart() const { return latency_; }
    QChart* fairnessChart() const { return fairness_; }
    int lineCount() const { return lines_; }  // over the three charts

  private:
    // One line per strategy of `y` against the clients; returns the y axis, for a caller that
    // fixes its scale.
    QValueAxis* plotCurves(QChart* chart, const Ramp& ramp, const QString& title,
                           const QString& y_title,
                           const std::function<std::optional<double>(const RampPoint&)>& y);

    QLabel* title_;
    QChart* throughput_;
    QChart* latency_;
    QChart* fairness_;
    int lines_ = 0;
};

}  // namespace lockbench::dashboard
