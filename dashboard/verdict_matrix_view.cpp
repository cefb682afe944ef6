#include "verdict_matrix_view.hpp"

#include <map>
#include <set>

#include <QHeaderView>

namespace lockbench::dashboard {
namespace {

constexpr int kRunRole = Qt::UserRole;
constexpr int kStateRole = Qt::UserRole + 1;

}  // namespace

VerdictMatrixView::VerdictMatrixView(QWidget* parent) : QTableWidget(parent) {
    setEditTriggers(NoEditTriggers);
    setSelectionMode(SingleSelection);
    setWordWrap(true);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(this, &QTableWidget::cellClicked, this, [this](int r, int c) {
        if (int run = runAt(r, c); run >= 0)
            emit runActivated(run);
    });
    connect(this, &QTableWidget::cellActivated, this, [this](int r, int c) {
        if (int run = runAt(r, c); run >= 0)
            emit runActivated(run);
    });
}

QColor VerdictMatrixView::colorOf(Cell c) {
    switch (c) {
        case Cell::expected:
            return QColor(198, 239, 206);
        case Cell::unexpected:
            return QColor(255, 170, 170);
        case Cell::unknown:
            return QColor(255, 235, 156);
        case Cell::empty:
            break;
    }
    return QColor(Qt::white);
}

void VerdictMatrixView::setRuns(const std::vector<Run>& runs) {
    clear();
    std::set<QString> strategies;
    std::set<QString> scenarios;
    std::map<std::pair<QString, QString>, int> newest;  // runs are in start order
    std::map<std::pair<QString, QString>, int> count;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const Run& r = runs[i];
        QString st = QString::fromStdString(r.strategy());
        QString sc = QString::fromStdString(r.scenario());
        strategies.insert(st);
        scenarios.insert(sc);
        newest[{st, sc}] = static_cast<int>(i);
        ++count[{st, sc}];
    }
    setRowCount(static_cast<int>(strategies.size()));
    setColumnCount(static_cast<int>(scenarios.size()));
    setVerticalHeaderLabels(QStringList(strategies.begin(), strategies.end()));
    setHorizontalHeaderLabels(QStringList(scenarios.begin(), scenarios.end()));

    int row = 0;
    for (const QString& st : strategies) {
        int col = 0;
        for (const QString& sc : scenarios) {
            auto* item = new QTableWidgetItem;
            Cell state = Cell::empty;
            int run_index = -1;
            if (auto it = newest.find({st, sc}); it != newest.end()) {
                run_index = it->second;
                const Run& r = runs[static_cast<std::size_t>(run_index)];
                QString text;
                if (r.in_progress) {
                    state = Cell::unknown;
                    text = tr("running…");
                } else if (!r.summary) {
                    state = Cell::unknown;
                    text = tr("unreadable summary");
                } else {
                    const RunSummary& s = *r.summary;
                    auto met = s.met_expectation();
                    state = !met ? Cell::unknown : *met ? Cell::expected : Cell::unexpected;
                    QString got = QString::fromStdString(s.outcome());
                    QString expected =
                        s.expected ? QString::fromStdString(*s.expected) : tr("no expectation");
                    text = state == Cell::expected
                               ? tr("✓ %1").arg(got)
                               : tr("%1 %2\nexpected %3")
                                     .arg(state == Cell::unexpected ? "✗" : "?", got, expected);
                    text += tr("\n%n violation(s)", "", static_cast<int>(s.violation_count));
                }
                if (int n = count[{st, sc}]; n > 1)
                    text += tr("\n(newest of %1 runs)").arg(n);
                item->setText(text);
                item->setToolTip(QString::fromStdString(r.name));
            }
            item->setData(kRunRole, run_index);
            item->setData(kStateRole, static_cast<int>(state));
            item->setBackground(colorOf(state));
            item->setForeground(QColor(Qt::black));
            item->setTextAlignment(Qt::AlignCenter);
            setItem(row, col, item);
            ++col;
        }
        ++row;
    }
}

int VerdictMatrixView::runAt(int row, int column) const {
    const QTableWidgetItem* it = item(row, column);
    return it ? it->data(kRunRole).toInt() : -1;
}

VerdictMatrixView::Cell VerdictMatrixView::cellState(int row, int column) const {
    const QTableWidgetItem* it = item(row, column);
    return it ? static_cast<Cell>(it->data(kStateRole).toInt()) : Cell::empty;
}

int VerdictMatrixView::rowOf(const QString& strategy) const {
    for (int r = 0; r < rowCount(); ++r) {
        if (verticalHeaderItem(r)->text() == strategy)
            return r;
    }
    return -1;
}

int VerdictMatrixView::columnOf(const QString& scenario) const {
    for (int c = 0; c < columnCount(); ++c) {
        if (horizontalHeaderItem(c)->text() == scenario)
            return c;
    }
    return -1;
}

}  // namespace lockbench::dashboard
