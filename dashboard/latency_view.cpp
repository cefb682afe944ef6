#include "dashboard/latency_view.hpp"

#include <algorithm>
#include <cmath>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QVBoxLayout>

#include "dashboard/chart_style.hpp"
#include "dashboard/percentile_distribution.hpp"

namespace lockbench::dashboard {
namespace {

// A log axis cannot show 0; a percentile under a microsecond is "instant" for a Redis lock.
constexpr double kFloorMs = 0.001;

void fill(QChart* chart, const std::vector<const Run*>& runs, const QString& title,
          LatencySummary RunSummary::*side) {
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    chart->setTitle(title);
    auto* series = new QBarSeries;
    double lo = 1;
    double hi = 1;
    for (const Run* run : runs) {
        if (!run->summary)
            continue;
        const LatencySummary& l = (*run->summary).*side;
        QString strategy = QString::fromStdString(run->summary->strategy);
        auto* set = new QBarSet(strategy);
        set->setColor(strategy_color(strategy));
        for (double v : {l.p50, l.p99, l.p999, l.max}) {
            v = std::max(v, kFloorMs);
            set->append(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        series->append(set);
    }
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(LatencyView::categories());
    auto* y = new QLogValueAxis;
    y->setBase(10);
    y->setTitleText(QObject::tr("ms (log)"));
    y->setLabelFormat("%g");
    y->setMinorTickCount(-1);
    // Whole decades around the data keep the gridlines on round numbers.
    y->setRange(std::pow(10.0, std::floor(std::log10(lo))),
                std::pow(10.0, std::ceil(std::log10(hi))));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

QLogValueAxis* decades_axis(double lo, double hi, const QString& title) {
    auto* axis = new QLogValueAxis;
    axis->setBase(10);
    axis->setTitleText(title);
    axis->setLabelFormat("%g");
    axis->setMinorTickCount(-1);
    // Whole decades around the data keep the gridlines on round numbers.
    axis->setRange(std::pow(10.0, std::floor(std::log10(lo))),
                   std::pow(10.0, std::ceil(std::log10(hi))));
    return axis;
}

// One line per run and file: latency (y) against 1/(1-percentile) (x), both on log axes. The
// 100 % row has no place on that axis; the max is in the bars above.
void fill_distribution(QChart* chart, const std::vector<const Run*>& runs, const QString& title) {
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
    chart->setTitle(title);
    double x_hi = 10, y_lo = 1, y_hi = 1;
    std::vector<QLineSeries*> lines;
    for (const Run* run : runs) {
        if (!run->summary)
            continue;
        const QString strategy = QString::fromStdString(run->summary->strategy);
        for (const bool corrected : {false, true}) {
            std::optional<std::vector<PercentilePoint>> points;
            try {
                points = load_percentile_distribution(
                    run->dir /
                    (corrected ? "latency-acquire-corrected.hgrm" : "latency-acquire.hgrm"));
            } catch (const std::runtime_error&) {
                continue;  // a damaged file: the bars above still show the summary's percentiles
            }
            if (!points)
                continue;
            auto* line = new QLineSeries;
            line->setName(corrected ? QObject::tr("%1 (from due)").arg(strategy) : strategy);
            QPen pen(strategy_color(strategy));
            pen.setWidthF(2);
            if (corrected)
                pen.setStyle(Qt::DashLine);
            line->setPen(pen);
            for (const PercentilePoint& p : *points) {
                if (p.percentile >= 1)
                    continue;
                const double x = 1 / (1 - p.percentile);
                const double y = std::max(p.value_ms, kFloorMs);
                line->append(x, y);
                x_hi = std::max(x_hi, x);
                y_lo = std::min(y_lo, y);
                y_hi = std::max(y_hi, y);
            }
            lines.push_back(line);
        }
    }
    auto* x = decades_axis(1, x_hi, QObject::tr("1/(1-percentile): 10 = p90, 100 = p99"));
    auto* y = decades_axis(y_lo, y_hi, QObject::tr("ms (log)"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QLineSeries* line : lines) {
        chart->addSeries(line);
        line->attachAxis(x);
        line->attachAxis(y);
    }
}

QChart* make_chart(QWidget* parent, QLayout* layout) {
    auto* chart = new QChart;
    chart->setAnimationOptions(QChart::NoAnimation);
    // Eight strategy names do not fit across half the window: one per line beside the chart.
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->legend()->setShowToolTips(true);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    layout->addWidget(view);
    return chart;
}

}  // namespace

LatencyView::LatencyView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bars = new QHBoxLayout;
    acquire_ = make_chart(this, bars);
    release_ = make_chart(this, bars);
    layout->addLayout(bars, 1);
    distribution_ = make_chart(this, layout);
    layout->setStretch(1, 1);  // the distribution as tall as the bars
}

const QStringList& LatencyView::categories() {
    static const QStringList c = {"p50", "p99", "p99.9", "max"};
    return c;
}

void LatencyView::setRuns(const std::vector<const Run*>& runs, const QString& title) {
    fill(acquire_, runs, tr("acquire latency — %1").arg(title), &SummaryView::acquire);
    fill(release_, runs, tr("release latency — %1").arg(title), &SummaryView::release);
    fill_distribution(distribution_, runs,
                      tr("acquire latency by percentile (latency-acquire.hgrm) — %1").arg(title));
}

}  // namespace lockbench::dashboard
