#pragma once

// Strategy × scenario: did each run show what its scenario expects (a "safe" strategy stayed
// safe, a demonstration did demonstrate)? A demonstration that fails to demonstrate is as red as
// an unexpected violation. Selecting a cell opens its run.

#include <vector>

#include <QTableWidget>

#include "results_model.hpp"

namespace lockbench::dashboard {

class VerdictMatrixView : public QTableWidget {
    Q_OBJECT

  public:
    enum class Cell { expected, unexpected, unknown, empty };

    explicit VerdictMatrixView(QWidget* parent = nullptr);

    // The newest run of each (strategy, scenario) fills its cell.
    void setRuns(const std::vector<Run>& runs);

    int runAt(int row, int column) const;  // index into the runs given, -1 for an empty cell
    Cell cellState(int row, int column) const;
    int rowOf(const QString& strategy) const;
    int columnOf(const QString& scenario) const;

    static QColor colorOf(Cell c);

  signals:
    void runActivated(int run_index);
};

}  // namespace lockbench::dashboard
