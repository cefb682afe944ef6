#include "dashboard/throughput_view.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include "dashboard/chart_style.hpp"

namespace lockbench::dashboard {

ThroughputView::ThroughputView(QWidget* parent)
    : QWidget(parent), chart_(new QChart), view_(new QChartView(chart_, this)) {
    // Animations would let a grab() catch a half-drawn frame.
    chart_->setAnimationOptions(QChart::NoAnimation);
    view_->setRenderHint(QPainter::Antialiasing);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
}

void ThroughputView::setRuns(const std::vector<const Run*>& runs, const QString& title) {
    resetAxes(title);
    // Ranges first, so the fault shading can span the final (rounded) height and be added
    // before the lines, which then draw over it.
    setRanges(runs);
    addFaultWindows(runs);
    for (const Run* run : runs) {
        if (run->summary)
            addLine(*run->summary);
    }
    if (lines_ == 0)
        chart_->setTitle(title + tr(" — no finished runs"));
}

void ThroughputView::resetAxes(const QString& title) {
    chart_->removeAllSeries();
    for (QAbstractAxis* a : chart_->axes()) {
        chart_->removeAxis(a);
        delete a;
    }
    lines_ = 0;
    faults_ = 0;
    chart_->setTitle(title);

    x_ = new QValueAxis;
    x_->setTitleText(tr("time (s)"));
    x_->setLabelFormat("%.1f");
    y_ = new QValueAxis;
    y_->setTitleText(tr("cycles/s"));
    y_->setLabelFormat("%.0f");
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
}

void ThroughputView::setRanges(const std::vector<const Run*>& runs) {
    double max_t = 1;
    double max_y = 1;
    for (const Run* run : runs) {
        if (!run->summary)
            continue;
        max_t = std::max(max_t, run->summary->duration_s);
        for (const TimePoint& p : run->summary->rate_series())
            max_y = std::max(max_y, p.cycles);
        for (const FaultWindow& f : run->summary->faults)
            max_t = std::max(max_t, fault_end_s(f));
    }
    x_->setRange(0, max_t);
    y_->setRange(0, max_y * 1.1);
    // Round ticks (0, 0.2, 0.4 … rather than 0.25 printed as "0.3").
    x_->applyNiceNumbers();
    y_->applyNiceNumbers();
}

void ThroughputView::addFaultWindows(const std::vector<const Run*>& runs) {
    const double max_y = y_->max();
    // Every strategy of a scenario runs the same fault schedule; draw each window once.
    std::set<std::tuple<double, double, std::string>> seen;
    for (const Run* run : runs) {
        if (!run->summary)
            continue;
        for (const FaultWindow& f : run->summary->faults) {
            if (!seen.insert({f.start_s, fault_end_s(f), fault_label(f)}).second)
                continue;
            auto* upper = new QLineSeries;
            auto* lower = new QLineSeries;
            double end =
                std::max(fault_end_s(f), f.start_s + 0.02);  // an instant still gets a sliver
            upper->append(f.start_s, max_y);
            upper->append(end, max_y);
            lower->append(f.start_s, 0);
            lower->append(end, 0);
            auto* area = new QAreaSeries(upper, lower);
            // QAreaSeries does not own its boundary lines; without parents they leak per refresh.
            upper->setParent(area);
            lower->setParent(area);
            area->setName(tr("fault: %1").arg(QString::fromStdString(fault_label(f))));
            area->setColor(fault_color());
            area->setBorderColor(fault_color().darker());
            chart_->addSeries(area);
            area->attachAxis(x_);
            area->attachAxis(y_);
            ++faults_;
        }
    }
}

void ThroughputView::addLine(const SummaryView& s) {
    auto* line = new QLineSeries;
    QString strategy = QString::fromStdString(s.strategy);
    line->setName(strategy);
    QPen pen(strategy_color(strategy));
    pen.setWidthF(2);
    line->setPen(pen);
    // A step per bucket: the rate is an average over that second, and a run of one second
    // (one bucket) still draws a line rather than a lone point.
    for (const TimePoint& p : s.rate_series()) {
        double len = std::clamp(s.duration_s - p.t, 0.0, 1.0);
        line->append(p.t, p.cycles);
        line->append(p.t + (len > 0 ? len : 1.0), p.cycles);
    }
    chart_->addSeries(line);
    line->attachAxis(x_);
    line->attachAxis(y_);
    ++lines_;
}

}  // namespace lockbench::dashboard
