#pragma once

// Scenario × strategy, one row per scenario so that its full name reads. The colour says what
// happened - red: a safety check broke; amber: only liveness did (deadlock, starvation); green:
// safe; grey: unknown or not finished - and the mark whether the scenario expected it: ✓ as
// expected, ✗ not, ? cannot tell. An expected violation is red with a ✓: a demonstration that
// worked, never "safe". Selecting a cell opens its run.

#include <vector>

#include <QTableWidget>

#include "dashboard/results_model.hpp"

namespace lockbench::dashboard {

class VerdictMatrixView : public QTableWidget {
    Q_OBJECT

  public:
    // What happened, which decides the colour.
    enum class Cell { safe, violated, liveness_only, unknown, empty };
    // Whether it was what the scenario expects, which decides the mark.
    enum class Mark { expected, unexpected, unknown, none };

    explicit VerdictMatrixView(QWidget* parent = nullptr);

    // The newest run of each (strategy, scenario) fills its cell.
    void setRuns(const std::vector<Run>& runs);

    int runAt(int row, int column) const;  // index into the runs given, -1 for an empty cell
    Cell cellState(int row, int column) const;
    Mark cellMark(int row, int column) const;
    int rowOf(const QString& scenario) const;
    int columnOf(const QString& strategy) const;

    static QColor colorOf(Cell c);
    static QString markOf(Mark m);  // "✓", "✗", "?", ""

  signals:
    void runActivated(int run_index);
};

}  // namespace lockbench::dashboard
