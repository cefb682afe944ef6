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
    // Whether it was what the scenario expects, which decides the mark. no_expectation ("–"):
    // the scenario states none for this strategy, which is not the "?" of a verdict that could
    // not be told.
    enum class Mark { expected, unexpected, unknown, none, no_expectation };

    explicit VerdictMatrixView(QWidget* parent = nullptr);

    // Every run of a (strategy, scenario) fills its cell: one run says what it showed; several
    // (repeats, or the same scenario with other settings) are counted - "3 of 5 violated" - and
    // coloured by the worst of them, so a violation is never hidden behind a newer safe run.
    void setRuns(const std::vector<Run>& runs);

    // Index into the runs given, -1 for an empty cell: the newest run of the cell's worst outcome.
    int runAt(int row, int column) const;
    Cell cellState(int row, int column) const;
    Mark cellMark(int row, int column) const;
    int rowOf(const QString& scenario) const;
    int columnOf(const QString& strategy) const;

    static QColor colorOf(Cell c);
    static QString markOf(Mark m);  // "✓", "✗", "?", "", "–"

  signals:
    void runActivated(int run_index);
};

}  // namespace lockbench::dashboard
