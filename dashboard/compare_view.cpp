#include "dashboard/compare_view.hpp"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QTableWidget>
#include <QVBoxLayout>

#include "dashboard/qt_text.hpp"

namespace lockbench::dashboard {
namespace {

QString number(double v) {
    return QString::number(v, 'g', 6);
}

QTableWidgetItem* cell_item(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignCenter);
    item->setForeground(QColor(Qt::black));
    return item;
}

// "3 of 5 (60 %, 95 %: 23–88 %)": the runs' verdicts, with the interval of one setting's rate
// (a sum over settings has none).
QString violated_text(const CompareStrategyStats& s, bool with_interval) {
    const CompareCounts& v = s.verdict;
    QString text = CompareView::tr("%1 of %2").arg(v.violated).arg(s.runs);
    if (v.violation_rate && with_interval) {
        text += CompareView::tr(" (%1 %, 95 %: %2–%3 %)")
                    .arg(*v.violation_rate * 100, 0, 'f', 0)
                    .arg(v.wilson_95.first * 100, 0, 'f', 0)
                    .arg(v.wilson_95.second * 100, 0, 'f', 0);
    }
    if (v.unknown > 0)
        text += CompareView::tr(", %1 unknown").arg(v.unknown);
    return text;
}

}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      summary_(new QTableWidget),
      maps_box_(new QWidget),
      maps_layout_(new QVBoxLayout(maps_box_)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    title_->setWordWrap(true);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(title_);
    summary_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    summary_->setWordWrap(true);
    summary_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    summary_->horizontalHeader()->setStretchLastSection(true);
    summary_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(summary_, 1);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(maps_box_);
    layout->addWidget(scroll, 2);
    setComparison(nullptr);
}

QColor CompareView::rateColor(std::optional<double> rate) {
    if (!rate)
        return QColor(221, 221, 221);
    // The matrix's green (safe) to its red (violated), through its amber.
    const QColor safe(198, 239, 206);
    const QColor half(255, 214, 153);
    const QColor all(255, 170, 170);
    const double r = std::clamp(*rate, 0.0, 1.0);
    const auto mix = [](const QColor& a, const QColor& b, double t) {
        return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                                static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                                static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
    };
    return r <= 0.5 ? mix(safe, half, r * 2) : mix(half, all, (r - 0.5) * 2);
}

QTableWidget* CompareView::heatMap(const std::string& strategy) const {
    const auto it = maps_.find(strategy);
    return it == maps_.end() ? nullptr : it->second;
}

namespace {

// "name: scenario, 2 strategies × 5 runs each", what the table sums, and the reading.
QString comparison_title(const Comparison& c) {
    QString title = CompareView::tr("%1: %2, %3 strategies × %4 runs each")
                        .arg(qs(c.name), qs(c.scenario))
                        .arg(c.strategies.size())
                        .arg(c.repeat);
    if (c.settings.size() > 1)
        title += CompareView::tr(" at %1 settings (the table sums them; the maps below show each)")
                     .arg(c.settings.size());
    if (!c.complete)
        title += CompareView::tr(" (incomplete: not every planned run was judged)");
    if (!c.reading.empty())
        title += "\n" + qs(c.reading);
    return title;
}

// Over a sweep, the runs of every setting together: the maps tell them apart.
CompareStrategyStats runs_of_every_setting(const Comparison& c, const std::string& strategy) {
    CompareStrategyStats total;
    CompareCounts& v = total.verdict;
    for (const CompareSetting& setting : c.settings) {
        const auto it = setting.strategies.find(strategy);
        if (it == setting.strategies.end())
            continue;
        total.runs += it->second.runs;
        v.violated += it->second.verdict.violated;
        v.valid += it->second.verdict.valid;
        v.unknown += it->second.verdict.unknown;
    }
    if (v.violated + v.valid > 0)
        v.violation_rate = static_cast<double>(v.violated) / (v.violated + v.valid);
    return total;
}

QString median_text(std::optional<double> median, int decimals) {
    return median ? QString::number(*median, 'f', decimals) : QString("–");
}

// One strategy's heat map: a cell per setting, k of n, shaded by its violation rate.
QTableWidget* heat_map(const Comparison& c, const std::string& strategy) {
    const CompareAxis& across = c.sweep[0];
    const CompareAxis* down = c.sweep.size() > 1 ? &c.sweep[1] : nullptr;
    const std::size_t columns = across.values.size();
    const std::size_t rows = down ? down->values.size() : 1;
    auto* map = new QTableWidget(static_cast<int>(rows), static_cast<int>(columns));
    map->setEditTriggers(QAbstractItemView::NoEditTriggers);
    QStringList column_labels;
    for (double v : across.values)
        column_labels << qs(across.field) + "=" + number(v);
    map->setHorizontalHeaderLabels(column_labels);
    QStringList row_labels;
    for (std::size_t r = 0; r < rows; ++r)
        row_labels << (down ? qs(down->field) + "=" + number(down->values[r]) : QString());
    map->setVerticalHeaderLabels(row_labels);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t col = 0; col < columns; ++col) {
            const CompareStrategyStats* cell = c.stats_at(strategy, col, r);
            auto* item = cell_item(
                cell ? CompareView::tr("%1/%2").arg(cell->verdict.violated).arg(cell->runs)
                     : QString("–"));
            item->setBackground(
                CompareView::rateColor(cell ? cell->verdict.violation_rate : std::nullopt));
            if (cell)
                item->setToolTip(violated_text(*cell, true));
            map->setItem(static_cast<int>(r), static_cast<int>(col), item);
        }
    }
    map->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    map->resizeRowsToContents();
    // Every cell in view: the map is a picture, not a list to scroll.
    map->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    map->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    map->setFixedHeight(map->horizontalHeader()->height() + map->verticalHeader()->length() +
                        2 * map->frameWidth() + 2);
    return map;
}

}  // namespace

void CompareView::setComparison(const Comparison* c) {
    clear();
    if (!c) {
        title_->setText(
            tr("No comparison in this results folder. Make one with: lockbench compare "
               "WORKLOAD --strategy set_nx_px,fenced --repeat 5 (add --sweep "
               "lease_ms=300,1000,3000 for a safety map)."));
        return;
    }
    title_->setText(comparison_title(*c));
    fillSummary(*c);
    if (c->sweep.empty())
        return;
    for (const std::string& strategy : c->strategies)
        addHeatMap(*c, strategy);
    maps_layout_->addStretch(1);
}

void CompareView::clear() {
    // The maps and their labels are the layout's widgets: deleted with it, once.
    maps_.clear();
    while (QLayoutItem* item = maps_layout_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    summary_->clear();
    summary_->setRowCount(0);
    summary_->setColumnCount(0);
}

void CompareView::fillSummary(const Comparison& c) {
    const QStringList headers = {tr("runs"), tr("violated"), tr("cycles/s (median)"),
                                 tr("acquire p99 ms (median)"), tr("reading")};
    summary_->setColumnCount(static_cast<int>(headers.size()));
    summary_->setHorizontalHeaderLabels(headers);
    summary_->setRowCount(static_cast<int>(c.strategies.size()));
    QStringList rows;
    for (std::size_t i = 0; i < c.strategies.size(); ++i) {
        const std::string& strategy = c.strategies[i];
        rows << qs(strategy);
        const bool summed = c.settings.size() > 1;
        const CompareStrategyStats total = runs_of_every_setting(c, strategy);
        const CompareStrategyStats* cell = summed ? &total : c.stats_at(strategy, 0, 0);
        if (!cell)
            continue;
        const int row = static_cast<int>(i);
        summary_->setItem(row, 0, cell_item(QString::number(cell->runs)));
        auto* violated = cell_item(violated_text(*cell, !summed));
        violated->setBackground(rateColor(cell->verdict.violation_rate));
        summary_->setItem(row, 1, violated);
        summary_->setItem(row, 2, cell_item(median_text(cell->cycles_per_s.median, 0)));
        summary_->setItem(row, 3, cell_item(median_text(cell->acquire_p99_ms.median, 2)));
        auto* reading = new QTableWidgetItem(qs(cell->reading));
        reading->setToolTip(qs(cell->reading));
        summary_->setItem(row, 4, reading);
    }
    summary_->setVerticalHeaderLabels(rows);
}

void CompareView::addHeatMap(const Comparison& c, const std::string& strategy) {
    const CompareAxis& across = c.sweep[0];
    const CompareAxis* down = c.sweep.size() > 1 ? &c.sweep[1] : nullptr;
    auto* label = new QLabel(
        tr("<b>%1</b>: runs that violated a check, k of n%2")
            .arg(qs(strategy).toHtmlEscaped(),
                 down ? tr(" (rows %1, columns %2)")
                            .arg(qs(down->field).toHtmlEscaped(), qs(across.field).toHtmlEscaped())
                      : QString()));
    maps_layout_->addWidget(label);
    QTableWidget* map = heat_map(c, strategy);
    maps_layout_->addWidget(map);
    maps_[strategy] = map;
}

}  // namespace lockbench::dashboard
