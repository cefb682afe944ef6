#include "dashboard/timeline_view.hpp"

#include <algorithm>
#include <cmath>

#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include "dashboard/chart_style.hpp"
#include "dashboard/level_of_detail.hpp"

namespace lockbench::dashboard {
namespace {

// The narrowest window: below a microsecond nothing in a Redis round trip is distinguishable.
constexpr std::int64_t kMinWindowNs = 1'000;

std::int64_t nice_step(std::int64_t span, int ticks) {
    double raw = static_cast<double>(span) / std::max(ticks, 1);
    double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * mag >= raw)
            return std::max<std::int64_t>(1, static_cast<std::int64_t>(m * mag));
    }
    return static_cast<std::int64_t>(10 * mag);
}

QGraphicsSimpleTextItem* add_text(QGraphicsScene* scene, const QString& text, double x, double y,
                                  int kind, QColor color = Qt::black) {
    auto* t = scene->addSimpleText(text);
    t->setPos(x, y);
    t->setBrush(color);
    t->setData(TimelineView::kKindRole, kind);
    return t;
}

}  // namespace

QString format_ns(std::int64_t ns) {
    double v = static_cast<double>(ns);
    double a = std::abs(v);
    if (a >= 1e9)
        return QString::number(v / 1e9, 'f', a >= 1e10 ? 1 : 3) + " s";
    if (a >= 1e6)
        return QString::number(v / 1e6, 'f', a >= 1e7 ? 1 : 2) + " ms";
    if (a >= 1e3)
        return QString::number(v / 1e3, 'f', 1) + " µs";
    return QString::number(ns) + " ns";
}

QStringList axis_labels(std::int64_t t0, std::int64_t t1, std::int64_t step) {
    step = std::max<std::int64_t>(step, 1);
    const double largest = static_cast<double>(std::max(std::abs(t0), std::abs(t1)));
    double unit = 1;
    QString suffix = "ns";
    if (largest >= 1e9) {
        unit = 1e9;
        suffix = "s";
    } else if (largest >= 1e6) {
        unit = 1e6;
        suffix = "ms";
    } else if (largest >= 1e3) {
        unit = 1e3;
        suffix = "µs";
    }
    // A step of 0.2 s needs one decimal, of 50 µs in seconds five: enough that no two ticks
    // print the same number.
    const double step_in_unit = static_cast<double>(step) / unit;
    const int decimals =
        std::clamp(static_cast<int>(std::ceil(-std::log10(step_in_unit) - 1e-9)), 0, 9);
    QStringList out;
    for (std::int64_t tick = (t0 / step) * step; tick <= t1; tick += step) {
        if (tick < t0)
            continue;
        out << QString::number(static_cast<double>(tick) / unit, 'f', decimals) + " " + suffix;
    }
    return out;
}

TimelineView::TimelineView(QWidget* parent)
    : QGraphicsView(parent), scene_(new QGraphicsScene(this)) {
    setScene(scene_);
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // Time is panned and zoomed by rebuilding the scene, not by scrolling it.
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setBackgroundBrush(Qt::white);
    setFocusPolicy(Qt::StrongFocus);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this] { rebuild(); });
    clearTimeline(tr("no run selected"));
}

void TimelineView::clearTimeline(const QString& message) {
    timeline_.reset();
    faults_.clear();
    highlighted_.clear();
    message_ = message;
    updateSceneRect();
    rebuild();
}

void TimelineView::setTimeline(std::shared_ptr<const Timeline> timeline, const QString& strategy,
                               std::vector<FaultWindow> faults, bool keep_window) {
    timeline_ = std::move(timeline);
    strategy_ = strategy;
    faults_ = std::move(faults);
    message_.clear();
    if (!keep_window) {
        highlighted_.clear();
        following_ = true;
    }
    updateSceneRect();
    if (following_ || !keep_window)
        showAll();
    else
        rebuild();
}

void TimelineView::setColorBy(ColorBy c) {
    color_by_ = c;
    rebuild();
}

void TimelineView::showAll() {
    following_ = true;
    std::int64_t end = timeline_ ? timeline_->end_ns : 1;
    for (const FaultWindow& f : faults_)
        end = std::max(end, static_cast<std::int64_t>(fault_end_s(f) * 1e9));
    t0_ = 0;
    t1_ = std::max<std::int64_t>(end, kMinWindowNs);
    rebuild();
    emit timeWindowChanged(t0_, t1_);
}

void TimelineView::setTimeWindow(std::int64_t t0, std::int64_t t1) {
    if (t1 - t0 < kMinWindowNs) {
        std::int64_t mid = t0 + (t1 - t0) / 2;
        t0 = mid - kMinWindowNs / 2;
        t1 = t0 + kMinWindowNs;
    }
    t0_ = t0;
    t1_ = t1;
    following_ = false;
    rebuild();
    emit timeWindowChanged(t0_, t1_);
}

void TimelineView::zoomTo(std::int64_t t0, std::int64_t t1,
                          const std::vector<std::int64_t>& processes) {
    // A margin of the interval's own length on each side shows what led into the overlap.
    std::int64_t margin = std::max<std::int64_t>((t1 - t0), 50'000);
    highlighted_ = std::set<std::int64_t>(processes.begin(), processes.end());
    if (timeline_ && !processes.empty()) {
        std::size_t row = timeline_->rows();
        for (std::int64_t p : processes)
            row = std::min(row, timeline_->row_of(p));
        if (row < timeline_->rows())
            verticalScrollBar()->setValue(static_cast<int>(row) * kRowHeight - 2 * kRowHeight);
    }
    setTimeWindow(t0 - margin, t1 + margin);
}

void TimelineView::zoomToOverlap(std::size_t i) {
    if (!timeline_ || i >= timeline_->overlaps.size())
        return;
    const Overlap& o = timeline_->overlaps[i];
    const Hold& a = timeline_->holds[o.a];
    const Hold& b = timeline_->holds[o.b];
    zoomTo(std::min(a.start_ns, b.start_ns), std::max(a.end_ns, b.end_ns), {a.process, b.process});
}

double TimelineView::plotWidth() const {
    return std::max(10, viewport()->width() - kLabelWidth - 8);
}

double TimelineView::xOf(std::int64_t t) const {
    return kLabelWidth +
           static_cast<double>(t - t0_) * plotWidth() / static_cast<double>(t1_ - t0_);
}

std::int64_t TimelineView::timeAt(double x) const {
    return t0_ + static_cast<std::int64_t>((x - kLabelWidth) / plotWidth() *
                                           static_cast<double>(t1_ - t0_));
}

QColor TimelineView::keyColor(std::int32_t key) const {
    if (color_by_ == ColorBy::strategy)
        return strategy_color(strategy_);
    return palette_color(key);
}

void TimelineView::updateSceneRect() {
    std::size_t rows = timeline_ ? timeline_->rows() : 0;
    scene_->setSceneRect(0, 0, viewport()->width(),
                         kAxisHeight + static_cast<double>(rows) * kRowHeight + 4);
}

namespace {

// A bar's tooltip: one hold's process, key, mode and times, or how many holds a bar of several
// stands for; then what made it red or left it open.
QString bar_tooltip(const Timeline& t, const Bar& b, std::int64_t process) {
    const Hold& h = t.holds[b.first];
    const QString key = b.mixed_keys
                            ? TimelineView::tr("several keys")
                            : QString::fromStdString(t.keys[static_cast<std::size_t>(b.key)]);
    QString tip = b.holds == 1 ? TimelineView::tr("p%1 %2 %3\n%4 → %5 (%6)")
                                     .arg(process)
                                     .arg(key, h.mode == HoldMode::shared ? "shared" : "exclusive",
                                          format_ns(b.start_ns), format_ns(b.end_ns),
                                          format_ns(b.end_ns - b.start_ns))
                               : TimelineView::tr("p%1 %2: %3 holds\n%4 → %5")
                                     .arg(process)
                                     .arg(key)
                                     .arg(b.holds)
                                     .arg(format_ns(b.start_ns), format_ns(b.end_ns));
    if (b.overlapped)
        tip += TimelineView::tr("\noverlaps a conflicting hold on the same key");
    if (b.crashed)
        tip += TimelineView::tr("\nended by the holder's crash");
    if (b.open_ended)
        tip += TimelineView::tr("\nstill held at the end of the history");
    return tip;
}

}  // namespace

void TimelineView::rebuild() {
    scene_->clear();
    bars_ = 0;
    red_bars_ = 0;
    nemesis_marks_ = 0;
    const double top = verticalScrollBar()->value();
    const double height = viewport()->height();
    if (!timeline_) {
        add_text(scene_, message_, 12, 12, axis, QColor(100, 100, 100));
        return;
    }
    const Timeline& t = *timeline_;
    const double rows_bottom = kAxisHeight + static_cast<double>(t.rows()) * kRowHeight;
    const double bottom = std::min(top + height, rows_bottom);
    const auto first_row =
        static_cast<std::size_t>(std::max(0.0, (top - kAxisHeight) / kRowHeight));
    const std::size_t last_row = std::min(
        t.rows(),
        static_cast<std::size_t>(std::max(0.0, (top + height - kAxisHeight) / kRowHeight)) + 1);

    drawFaultWindows(top, bottom);
    for (std::size_t row = first_row; row < last_row; ++row)
        drawRow(row);
    drawNemesisMarks(top, bottom);
    drawTimeAxis(top, bottom);
    if (t.rows() == 0)
        add_text(scene_, tr("no lock holds in this history yet"), kLabelWidth,
                 top + kAxisHeight + 8, axis, QColor(100, 100, 100));
}

double TimelineView::plotX(std::int64_t t) const {
    const auto left = static_cast<double>(kLabelWidth);
    return std::clamp(xOf(t), left, left + plotWidth());
}

void TimelineView::drawFaultWindows(double top, double bottom) {
    for (const FaultWindow& f : faults_) {
        auto s = static_cast<std::int64_t>(f.start_s * 1e9);
        auto e = static_cast<std::int64_t>(fault_end_s(f) * 1e9);
        if (e < t0_ || s > t1_)
            continue;
        double x0 = plotX(s);
        double x1 = std::max(plotX(e), x0 + 2);
        auto* r = scene_->addRect(x0, top + kAxisHeight, x1 - x0, bottom - top - kAxisHeight,
                                  Qt::NoPen, fault_color());
        r->setZValue(-2);
        r->setData(kKindRole, fault_window);
        r->setToolTip(QString::fromStdString(fault_label(f)));
        add_text(scene_, QString::fromStdString(fault_label(f)), x0 + 2, top + kAxisHeight,
                 fault_window, QColor(70, 70, 70))
            ->setZValue(5);
    }
}

void TimelineView::drawRow(std::size_t row) {
    const Timeline& t = *timeline_;
    const double y = kAxisHeight + static_cast<double>(row) * kRowHeight;
    const std::int64_t process = t.processes[row];
    if (highlighted_.count(process)) {
        auto* band = scene_->addRect(0, y, viewport()->width(), kRowHeight, Qt::NoPen,
                                     QColor(255, 245, 180));
        band->setZValue(-3);
    }
    add_text(scene_, tr("p%1").arg(process), 4, y + 1, row_label, QColor(60, 60, 60));
    for (const Bar& b : visible_bars(t, row, t0_, t1_, static_cast<int>(plotWidth()))) {
        double x0 = plotX(b.start_ns);
        double x1 = std::max(plotX(b.end_ns), x0 + 1);  // every hold is at least 1 px
        QColor fill = b.overlapped ? overlap_color() : keyColor(b.key);
        QPen pen = b.overlapped ? QPen(overlap_color().darker(150), 1) : QPen(Qt::NoPen);
        auto* r = scene_->addRect(x0, y + 3, x1 - x0, kRowHeight - 6, pen, fill);
        r->setData(kKindRole, b.overlapped ? overlap_bar : bar);
        r->setToolTip(bar_tooltip(t, b, process));
        ++bars_;
        if (b.overlapped)
            ++red_bars_;
    }
}

// Nemesis marks over the rows; labels only where they do not collide with the previous one.
void TimelineView::drawNemesisMarks(double top, double bottom) {
    const Timeline& t = *timeline_;
    double last_label = -1e9;
    auto nem_begin =
        std::lower_bound(t.nemesis.begin(), t.nemesis.end(), t0_,
                         [](const NemesisEvent& n, std::int64_t v) { return n.time_ns < v; });
    for (auto it = nem_begin; it != t.nemesis.end() && it->time_ns <= t1_; ++it) {
        double x = xOf(it->time_ns);
        auto* line =
            scene_->addLine(x, top + kAxisHeight - 6, x, bottom, QPen(nemesis_color(), 1.5));
        line->setZValue(3);
        line->setData(kKindRole, nemesis_mark);
        QString label = QString::fromStdString(it->f) +
                        (it->target.empty() ? QString() : " " + QString::fromStdString(it->target));
        line->setToolTip(tr("nemesis %1 at %2").arg(label, format_ns(it->time_ns)));
        ++nemesis_marks_;
        if (x - last_label > 60) {
            add_text(scene_, label, x + 2, top + kAxisHeight - 16, nemesis_mark, nemesis_color())
                ->setZValue(6);
            last_label = x;
        }
    }
}

// The axis rides on top of the visible area, so it stays put while rows scroll beneath it.
void TimelineView::drawTimeAxis(double top, double bottom) {
    const double width = viewport()->width();
    auto* band = scene_->addRect(0, top, width, kAxisHeight, Qt::NoPen, QColor(250, 250, 250));
    band->setZValue(4);
    band->setData(kKindRole, axis);
    const int pixels = static_cast<int>(plotWidth());
    const std::int64_t step = nice_step(t1_ - t0_, std::max(2, pixels / 110));
    const QStringList labels = axis_labels(t0_, t1_, step);
    int label = 0;
    for (std::int64_t tick = (t0_ / step) * step; tick <= t1_; tick += step) {
        if (tick < t0_)
            continue;
        const QString text = labels.value(label++);
        double x = xOf(tick);
        auto* l = scene_->addLine(x, top + 14, x, top + kAxisHeight, QPen(QColor(150, 150, 150)));
        l->setZValue(5);
        auto* grid = scene_->addLine(x, top + kAxisHeight, x, bottom, QPen(QColor(235, 235, 235)));
        grid->setZValue(-4);
        if (x + 56 < width)  // a label cut by the edge reads as a different number
            add_text(scene_, text, x + 2, top, axis, QColor(60, 60, 60))->setZValue(5);
    }
    auto* base = scene_->addLine(0, top + kAxisHeight, width, top + kAxisHeight,
                                 QPen(QColor(150, 150, 150)));
    base->setZValue(5);
}

void TimelineView::resizeEvent(QResizeEvent* e) {
    QGraphicsView::resizeEvent(e);
    updateSceneRect();
    rebuild();
}

void TimelineView::zoomAround(double x, double factor) {
    if (!timeline_)
        return;
    std::int64_t anchor = timeAt(std::clamp(x, double(kLabelWidth), kLabelWidth + plotWidth()));
    auto span = static_cast<double>(t1_ - t0_) * factor;
    double left = static_cast<double>(anchor - t0_) * factor;
    setTimeWindow(anchor - static_cast<std::int64_t>(left),
                  anchor - static_cast<std::int64_t>(left) + static_cast<std::int64_t>(span));
}

void TimelineView::panBy(double dx) {
    if (!timeline_)
        return;
    auto dt = static_cast<std::int64_t>(dx / plotWidth() * static_cast<double>(t1_ - t0_));
    setTimeWindow(t0_ - dt, t1_ - dt);
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    if (e->modifiers() & Qt::ShiftModifier) {
        QGraphicsView::wheelEvent(e);
        return;
    }
    double notches = e->angleDelta().y() / 120.0;
    zoomAround(e->position().x(), std::pow(0.8, notches));
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) {
        dragging_ = true;
        drag_x_ = e->position().x();
        setCursor(Qt::ClosedHandCursor);
    }
    QGraphicsView::mousePressEvent(e);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    if (dragging_) {
        panBy(e->position().x() - drag_x_);
        drag_x_ = e->position().x();
    }
    QGraphicsView::mouseMoveEvent(e);
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    dragging_ = false;
    unsetCursor();
    QGraphicsView::mouseReleaseEvent(e);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
    showAll();
    e->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    const double centre = kLabelWidth + plotWidth() / 2;
    switch (e->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            zoomAround(centre, 0.5);
            break;
        case Qt::Key_Minus:
            zoomAround(centre, 2.0);
            break;
        case Qt::Key_Left:
            panBy(plotWidth() / 4);
            break;
        case Qt::Key_Right:
            panBy(-plotWidth() / 4);
            break;
        case Qt::Key_Home:
            showAll();
            break;
        default:
            QGraphicsView::keyPressEvent(e);
            return;
    }
    e->accept();
}

}  // namespace lockbench::dashboard
