#include "dashboard/verdict_matrix_view.hpp"

#include <map>
#include <set>

#include <QHeaderView>

namespace lockbench::dashboard {
namespace {

constexpr int kRunRole = Qt::UserRole;
constexpr int kStateRole = Qt::UserRole + 1;
constexpr int kMarkRole = Qt::UserRole + 2;

}  // namespace

VerdictMatrixView::VerdictMatrixView(QWidget* parent) : QTableWidget(parent) {
    setEditTriggers(NoEditTriggers);
    setSelectionMode(SingleSelection);
    setWordWrap(true);
    // Strategy names are short: they fit as column headers; scenario names are long and sit on
    // the rows, where they are never cut.
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    verticalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
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
        case Cell::safe:
            return QColor(198, 239, 206);
        case Cell::violated:
            return QColor(255, 170, 170);
        case Cell::liveness_only:
            return QColor(255, 214, 153);
        case Cell::unknown:
            return QColor(221, 221, 221);
        case Cell::empty:
            break;
    }
    return QColor(Qt::white);
}

QString VerdictMatrixView::markOf(Mark m) {
    switch (m) {
        case Mark::expected:
            return QStringLiteral("✓");
        case Mark::unexpected:
            return QStringLiteral("✗");
        case Mark::unknown:
            return QStringLiteral("?");
        case Mark::none:
            break;
    }
    return {};
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
        newest[{sc, st}] = static_cast<int>(i);
        ++count[{sc, st}];
    }
    setRowCount(static_cast<int>(scenarios.size()));
    setColumnCount(static_cast<int>(strategies.size()));
    setVerticalHeaderLabels(QStringList(scenarios.begin(), scenarios.end()));
    setHorizontalHeaderLabels(QStringList(strategies.begin(), strategies.end()));

    int row = 0;
    for (const QString& sc : scenarios) {
        int col = 0;
        for (const QString& st : strategies) {
            auto* item = new QTableWidgetItem;
            Cell state = Cell::empty;
            Mark mark = Mark::none;
            int run_index = -1;
            if (auto it = newest.find({sc, st}); it != newest.end()) {
                run_index = it->second;
                const Run& r = runs[static_cast<std::size_t>(run_index)];
                QString text;
                QString tip = QString::fromStdString(r.name);
                if (r.in_progress) {
                    state = Cell::unknown;
                    text = tr("running…");
                } else if (!r.summary) {
                    state = Cell::unknown;
                    text = tr("unreadable summary");
                } else {
                    const RunSummary& s = *r.summary;
                    switch (s.validity) {
                        case Validity::valid:
                            state = Cell::safe;
                            break;
                        case Validity::invalid:
                            state =
                                s.only_liveness_violated() ? Cell::liveness_only : Cell::violated;
                            break;
                        case Validity::unknown:
                            state = Cell::unknown;
                            break;
                    }
                    const auto met = s.met_expectation();
                    mark = !met ? Mark::unknown : *met ? Mark::expected : Mark::unexpected;
                    text = markOf(mark) + " " + QString::fromStdString(s.short_outcome());
                    if (s.validity == Validity::invalid)
                        text += tr("\n%n violation(s)", "", static_cast<int>(s.violation_count));
                    if (mark != Mark::expected && s.expected)
                        text += tr("\nexpected %1").arg(QString::fromStdString(*s.expected));
                    tip += tr("\noutcome: %1").arg(QString::fromStdString(s.outcome()));
                    tip += tr("\nexpected: %1")
                               .arg(s.expected ? QString::fromStdString(*s.expected)
                                               : tr("nothing stated"));
                    for (const std::string& reason : s.unknown_reasons)
                        tip += tr("\nunknown: %1").arg(QString::fromStdString(reason));
                    if (s.server_us_per_cycle && s.engine_us_per_cycle) {
                        tip += tr("\nCPU per cycle: server %1 µs, engine %2 µs; bottleneck: %3")
                                   .arg(*s.server_us_per_cycle, 0, 'f', 1)
                                   .arg(*s.engine_us_per_cycle, 0, 'f', 1)
                                   .arg(QString::fromStdString(s.bottleneck));
                    }
                }
                if (int n = count[{sc, st}]; n > 1)
                    text += tr("\n(newest of %1 runs)").arg(n);
                item->setText(text);
                item->setToolTip(tip);
            }
            item->setData(kRunRole, run_index);
            item->setData(kStateRole, static_cast<int>(state));
            item->setData(kMarkRole, static_cast<int>(mark));
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

VerdictMatrixView::Mark VerdictMatrixView::cellMark(int row, int column) const {
    const QTableWidgetItem* it = item(row, column);
    return it ? static_cast<Mark>(it->data(kMarkRole).toInt()) : Mark::none;
}

int VerdictMatrixView::rowOf(const QString& scenario) const {
    for (int r = 0; r < rowCount(); ++r) {
        if (verticalHeaderItem(r)->text() == scenario)
            return r;
    }
    return -1;
}

int VerdictMatrixView::columnOf(const QString& strategy) const {
    for (int c = 0; c < columnCount(); ++c) {
        if (horizontalHeaderItem(c)->text() == strategy)
            return c;
    }
    return -1;
}

}  // namespace lockbench::dashboard
