#include "latency_view.hpp"

#include <algorithm>
#include <cmath>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLegend>
#include <QLogValueAxis>

#include "chart_style.hpp"

namespace lockbench::dashboard {
namespace {

// A log axis cannot show 0; a percentile under a microsecond is "instant" for a Redis lock.
constexpr double kFloorMs = 0.001;

void fill(QChart* chart, const std::vector<const Run*>& runs, const QString& title,
          LatencyStats RunSummary::*side) {
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
        const LatencyStats& l = (*run->summary).*side;
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
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    acquire_ = make_chart(this, layout);
    release_ = make_chart(this, layout);
}

const QStringList& LatencyView::categories() {
    static const QStringList c = {"p50", "p99", "p99.9", "max"};
    return c;
}

void LatencyView::setRuns(const std::vector<const Run*>& runs, const QString& title) {
    fill(acquire_, runs, tr("acquire latency — %1").arg(title), &RunSummary::acquire);
    fill(release_, runs, tr("release latency — %1").arg(title), &RunSummary::release);
}

}  // namespace lockbench::dashboard
