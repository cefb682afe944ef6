#pragma once

// A comparison (`lockbench compare`, `run --repeat`; compare.json): per strategy, how many runs
// violated a check - k of n with the Wilson 95 % interval of the rate - throughput and acquire
// p99 as medians, and the reading in words. With a sweep, a heat map per strategy of the
// violation rate over the swept settings (first axis across, second down), so the boundary
// between safe and unsafe leases is one look.

#include <map>
#include <optional>
#include <string>

#include <QColor>
#include <QWidget>

#include "dashboard/results_model.hpp"

class QLabel;
class QTableWidget;
class QVBoxLayout;

namespace lockbench::dashboard {

class CompareView : public QWidget {
    Q_OBJECT

  public:
    explicit CompareView(QWidget* parent = nullptr);

    // Draws `comparison` (nullptr: says there is none, and how to make one).
    void setComparison(const Comparison* comparison);

    QLabel* title() const { return title_; }
    // A row per strategy: runs, violated (k of n), rate and interval, cycles/s, acquire p99,
    // reading. Over the first setting only when there is a sweep (the maps show the rest).
    QTableWidget* summaryTable() const { return summary_; }
    // The heat map of one strategy (nullptr without a sweep, or for another strategy).
    QTableWidget* heatMap(const std::string& strategy) const;
    int heatMapCount() const { return static_cast<int>(maps_.size()); }

    // Green for no violation, through amber, to red for every run; grey when nothing was judged.
    static QColor rateColor(std::optional<double> rate);

  private:
    void clear();
    // A row per strategy; over a sweep, every setting's runs together.
    void fillSummary(const Comparison& comparison);
    // One strategy's heat map under its label (with a sweep only).
    void addHeatMap(const Comparison& comparison, const std::string& strategy);

    QLabel* title_;
    QTableWidget* summary_;
    QWidget* maps_box_;
    QVBoxLayout* maps_layout_;
    std::map<std::string, QTableWidget*> maps_;
};

}  // namespace lockbench::dashboard
