#pragma once

// A ramp's curves (`lockbench run --clients-ramp`): throughput, acquire p99 and fairness (Jain's
// index) against the number of clients, one line per strategy, so where a lock stops scaling -
// or starts starving clients - is one look.

#include <QWidget>

#include "dashboard/results_model.hpp"

class QChart;
class QLabel;

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
    QLabel* title_;
    QChart* throughput_;
    QChart* latency_;
    QChart* fairness_;
    int lines_ = 0;
};

}  // namespace lockbench::dashboard
