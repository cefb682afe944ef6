#include "dashboard/scalability_view.hpp"

#include <algorithm>
#include <functional>

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include "dashboard/chart_style.hpp"

namespace lockbench::dashboard {

namespace {

QChartView* view_of(QChart* chart) {
    chart->setAnimationOptions(QChart::NoAnimation);  // a grab() must not catch half a frame
    auto* view = new QChartView(chart);
    view->setRenderHint(QPainter::Antialiasing);
    return view;
}

void clear(QChart* chart) {
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
}

// The same clients axis for every chart of a ramp. Client counts usually grow geometrically (1, 10,
// 100, 1000): a log axis when they span more than a decade.
QAbstractAxis* clients_axis(const Ramp& ramp) {
    int min_clients = 1 << 30, max_clients = 1;
    for (const auto& [strategy, points] : ramp.curves) {
        for (const RampPoint& p : points) {
            min_clients = std::min(min_clients, p.clients);
            max_clients = std::max(max_clients, p.clients);
        }
    }
    QAbstractAxis* x = nullptr;
    if (max_clients >= 10 * std::max(min_clients, 1)) {
        auto* axis = new QLogValueAxis;
        axis->setBase(10);
        axis->setLabelFormat("%g");
        axis->setRange(std::max(min_clients, 1) * 0.8, max_clients * 1.25);
        x = axis;
    } else {
        auto* axis = new QValueAxis;
        axis->setLabelFormat("%d");
        axis->setRange(0, max_clients * 1.05);
        x = axis;
    }
    x->setTitleText(ScalabilityView::tr("clients"));
    return x;
}

}  // namespace

ScalabilityView::ScalabilityView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      throughput_(new QChart),
      latency_(new QChart),
      fairness_(new QChart) {
    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    title_->setWordWrap(true);
    layout->addWidget(title_, 0, 0, 1, 2);
    layout->addWidget(view_of(throughput_), 1, 0);
    layout->addWidget(view_of(latency_), 1, 1);
    layout->addWidget(view_of(fairness_), 2, 0);
    layout->setRowStretch(1, 1);
    layout->setRowStretch(2, 1);
    setRamp(nullptr);
}

void ScalabilityView::setRamp(const Ramp* ramp) {
    lines_ = 0;
    for (QChart* c : {throughput_, latency_, fairness_})
        clear(c);
    if (!ramp || ramp->curves.empty()) {
        title_->setText(
            tr("No ramp in this results folder. Make one with: lockbench run "
               "WORKLOAD --clients-ramp 1,10,100,1000 --strategy set_nx_px,fenced"));
        return;
    }
    title_->setText(tr("%1: %2").arg(QString::fromStdString(ramp->name),
                                     QString::fromStdString(ramp->scenario)));
    plotCurves(throughput_, *ramp, tr("throughput"), tr("cycles/s"),
               [](const RampPoint& p) { return std::optional<double>(p.cycles_per_s); });
    plotCurves(latency_, *ramp, tr("acquire p99"), tr("ms"),
               [](const RampPoint& p) { return std::optional<double>(p.acquire_p99_ms); });
    // Jain's index lives in (0, 1]: a fixed scale keeps 0.9 looking like 0.9.
    plotCurves(fairness_, *ramp,
               tr("fairness: Jain's index of cycles per client (1 = equal shares)"),
               tr("Jain's index"), [](const RampPoint& p) { return p.fairness.jain_index; })
        ->setRange(0, 1);
}

QValueAxis* ScalabilityView::plotCurves(
    QChart* chart, const Ramp& ramp, const QString& title, const QString& y_title,
    const std::function<std::optional<double>(const RampPoint&)>& y) {
    chart->setTitle(title);
    QAbstractAxis* x = clients_axis(ramp);
    auto* y_axis = new QValueAxis;
    y_axis->setTitleText(y_title);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    double max_y = 0;
    for (const auto& [strategy, points] : ramp.curves) {
        auto* line = new QLineSeries;
        auto* dots = new QScatterSeries;
        line->setName(QString::fromStdString(strategy));
        const QColor color = strategy_color(QString::fromStdString(strategy));
        line->setColor(color);
        dots->setColor(color);
        dots->setMarkerSize(7);
        for (const RampPoint& p : points) {
            if (const auto v = y(p)) {
                line->append(p.clients, *v);
                dots->append(p.clients, *v);
                max_y = std::max(max_y, *v);
            }
        }
        for (QXYSeries* s : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(dots)}) {
            chart->addSeries(s);
            s->attachAxis(x);
            s->attachAxis(y_axis);
        }
        chart->legend()->markers(dots).front()->setVisible(false);
        ++lines_;
    }
    y_axis->setRange(0, max_y > 0 ? max_y * 1.1 : 1);
    y_axis->applyNiceNumbers();
    return y_axis;
}

}  // namespace lockbench::dashboard
