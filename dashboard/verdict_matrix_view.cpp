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
        case Mark::no_expectation:
            return QStringLiteral("–");
        case Mark::none:
            break;
    }
    return {};
}

namespace {

// One run as a cell would show it on its own.
struct RunCell {
    VerdictMatrixView::Cell state = VerdictMatrixView::Cell::unknown;
    VerdictMatrixView::Mark mark = VerdictMatrixView::Mark::none;
    QString outcome;  // "mutual exclusion", "safe", "running…"
    bool violated = false;
};

RunCell cell_of(const Run& r) {
    using Cell = VerdictMatrixView::Cell;
    using Mark = VerdictMatrixView::Mark;
    RunCell c;
    if (r.in_progress) {
        c.outcome = VerdictMatrixView::tr("running…");
        return c;
    }
    if (!r.summary) {
        c.outcome = VerdictMatrixView::tr("unreadable summary");
        return c;
    }
    const SummaryView& s = *r.summary;
    switch (s.validity) {
        case Validity::valid:
            c.state = Cell::safe;
            break;
        case Validity::invalid:
            c.state = s.only_liveness_violated() ? Cell::liveness_only : Cell::violated;
            c.violated = true;
            break;
        case Validity::unknown:
            c.state = Cell::unknown;
            break;
    }
    const auto met = s.met_expectation();
    if (!s.expected && !met)
        c.mark = Mark::no_expectation;
    else
        c.mark = !met ? Mark::unknown : *met ? Mark::expected : Mark::unexpected;
    c.outcome = QString::fromStdString(s.short_outcome());
    return c;
}

// Worse first: a cell shows the worst of its runs.
int severity(VerdictMatrixView::Cell c) {
    using Cell = VerdictMatrixView::Cell;
    switch (c) {
        case Cell::violated:
            return 4;
        case Cell::liveness_only:
            return 3;
        case Cell::unknown:
            return 2;
        case Cell::safe:
            return 1;
        case Cell::empty:
            break;
    }
    return 0;
}

QString mark_words(VerdictMatrixView::Mark m) {
    using Mark = VerdictMatrixView::Mark;
    switch (m) {
        case Mark::expected:
            return VerdictMatrixView::tr("as expected");
        case Mark::unexpected:
            return VerdictMatrixView::tr("not as expected");
        case Mark::unknown:
            return VerdictMatrixView::tr("expectation cannot be told");
        case Mark::no_expectation:
            return VerdictMatrixView::tr("no expectation");
        case Mark::none:
            break;
    }
    return {};
}

// Several runs: not as expected if any was not; as expected only if every run with an
// expectation met it.
VerdictMatrixView::Mark combined_mark(const std::vector<RunCell>& cells) {
    using Mark = VerdictMatrixView::Mark;
    bool unexpected = false;
    bool unknown = false;
    bool expected = false;
    for (const RunCell& c : cells) {
        unexpected |= c.mark == Mark::unexpected;
        unknown |= c.mark == Mark::unknown || c.mark == Mark::none;
        expected |= c.mark == Mark::expected;
    }
    if (unexpected)
        return Mark::unexpected;
    if (unknown)
        return Mark::unknown;
    return expected ? Mark::expected : Mark::no_expectation;
}

// What a cell says of the runs of one scenario and strategy (in start order).
struct MatrixCell {
    VerdictMatrixView::Cell state = VerdictMatrixView::Cell::empty;
    VerdictMatrixView::Mark mark = VerdictMatrixView::Mark::none;
    int run_index = -1;  // the run a click opens
    QString text;
    QString tip;
};

// The expectation, the reasons for unknown and the CPU per cycle of the run the cell shows.
void add_summary_words(const SummaryView& s, VerdictMatrixView::Mark mark, QString& text,
                       QString& tip) {
    if (mark != VerdictMatrixView::Mark::expected && s.expected)
        text += VerdictMatrixView::tr("\nexpected %1").arg(QString::fromStdString(*s.expected));
    tip += VerdictMatrixView::tr("\noutcome: %1").arg(QString::fromStdString(s.outcome()));
    tip += VerdictMatrixView::tr("\nexpected: %1")
               .arg(s.expected ? QString::fromStdString(*s.expected)
                               : VerdictMatrixView::tr("nothing stated"));
    if (mark == VerdictMatrixView::Mark::no_expectation)
        tip += VerdictMatrixView::tr("\n– : no expectation (the scenario states none for %1)")
                   .arg(QString::fromStdString(s.strategy));
    for (const std::string& reason : s.verdict.unknown_reasons)
        tip += VerdictMatrixView::tr("\nunknown: %1").arg(QString::fromStdString(reason));
    if (s.server_us_per_cycle() && s.engine_us_per_cycle()) {
        tip += VerdictMatrixView::tr("\nCPU per cycle: server %1 µs, engine %2 µs; bottleneck: %3")
                   .arg(*s.server_us_per_cycle(), 0, 'f', 1)
                   .arg(*s.engine_us_per_cycle(), 0, 'f', 1)
                   .arg(QString::fromStdString(s.bottleneck().value_or("")));
    }
}

MatrixCell matrix_cell(const std::vector<Run>& runs, const std::vector<int>& indices) {
    std::vector<RunCell> each;
    int violated = 0;
    for (int i : indices) {
        each.push_back(cell_of(runs[static_cast<std::size_t>(i)]));
        violated += each.back().violated ? 1 : 0;
    }
    // The newest run of the worst outcome speaks for the cell and opens on a click.
    std::size_t shown = 0;
    for (std::size_t k = 0; k < each.size(); ++k) {
        if (severity(each[k].state) >= severity(each[shown].state))
            shown = k;
    }
    MatrixCell c;
    c.run_index = indices[shown];
    const Run& r = runs[static_cast<std::size_t>(c.run_index)];
    c.state = each[shown].state;
    c.mark = indices.size() == 1 ? each[shown].mark : combined_mark(each);
    const QString mark = VerdictMatrixView::markOf(c.mark);
    c.text = mark + (mark.isEmpty() ? "" : " ") + each[shown].outcome;
    c.tip = QString::fromStdString(r.name);
    if (indices.size() > 1) {
        c.text += VerdictMatrixView::tr("\n%1 of %2 violated").arg(violated).arg(indices.size());
        c.tip = VerdictMatrixView::tr("%1 runs; the cell shows %2, the newest of the worst outcome")
                    .arg(indices.size())
                    .arg(QString::fromStdString(r.name));
        for (std::size_t k = indices.size(); k-- > 0;) {
            const Run& each_run = runs[static_cast<std::size_t>(indices[k])];
            c.tip += QString("\n%1: %2 (%3)")
                         .arg(QString::fromStdString(each_run.name), each[k].outcome,
                              mark_words(each[k].mark));
        }
    } else if (r.summary && r.summary->validity == Validity::invalid) {
        c.text += VerdictMatrixView::tr("\n%n violation(s)", "",
                                        static_cast<int>(r.summary->violation_count));
    }
    if (r.summary && !r.in_progress)
        add_summary_words(*r.summary, c.mark, c.text, c.tip);
    return c;
}

}  // namespace

void VerdictMatrixView::setRuns(const std::vector<Run>& runs) {
    clear();
    std::set<QString> strategies;
    std::set<QString> scenarios;
    std::map<std::pair<QString, QString>, std::vector<int>> cells;  // runs in start order
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const Run& r = runs[i];
        QString st = QString::fromStdString(r.strategy());
        QString sc = QString::fromStdString(r.scenario());
        strategies.insert(st);
        scenarios.insert(sc);
        cells[{sc, st}].push_back(static_cast<int>(i));
    }
    setRowCount(static_cast<int>(scenarios.size()));
    setColumnCount(static_cast<int>(strategies.size()));
    setVerticalHeaderLabels(QStringList(scenarios.begin(), scenarios.end()));
    setHorizontalHeaderLabels(QStringList(strategies.begin(), strategies.end()));

    int row = 0;
    for (const QString& sc : scenarios) {
        int col = 0;
        for (const QString& st : strategies) {
            MatrixCell c;  // empty: no run of this pair
            if (auto it = cells.find({sc, st}); it != cells.end())
                c = matrix_cell(runs, it->second);
            auto* item = new QTableWidgetItem;
            if (c.run_index >= 0) {
                item->setText(c.text);
                item->setToolTip(c.tip);
            }
            item->setData(kRunRole, c.run_index);
            item->setData(kStateRole, static_cast<int>(c.state));
            item->setData(kMarkRole, static_cast<int>(c.mark));
            item->setBackground(colorOf(c.state));
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
