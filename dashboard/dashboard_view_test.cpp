// Every view of the dashboard, offscreen, on real results made by `lockbench run`: what is drawn
// is asserted through the widgets' own API (chart series and axes, table cells, scene items and
// their colours), not only that a PNG appears. Broken and empty folders must leave a usable
// window with a message naming the file.

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <unistd.h>

#include <QAbstractAxis>
#include <QApplication>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QEventLoop>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QLogValueAxis>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QValueAxis>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checker/testing/temp_dir.hpp"
#include "dashboard/chart_style.hpp"
#include "dashboard/compare_view.hpp"
#include "dashboard/dashboard_test_results.hpp"
#include "dashboard/latency_view.hpp"
#include "dashboard/main_window.hpp"
#include "dashboard/percentile_distribution.hpp"
#include "dashboard/scalability_view.hpp"
#include "dashboard/throughput_view.hpp"
#include "dashboard/timeline_view.hpp"
#include "dashboard/verdict_matrix_view.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench::dashboard {
namespace {

namespace fs = std::filesystem;

int run_index(const MainWindow& w, const std::string& strategy, const std::string& scenario) {
    const auto& runs = w.scan().runs;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].strategy() == strategy && runs[i].scenario() == scenario)
            return static_cast<int>(i);
    }
    return -1;
}

// Red rectangles in the timeline's scene, counted by their brush: what a person sees as red.
int red_items(TimelineView* v) {
    int n = 0;
    for (QGraphicsItem* item : v->scene()->items()) {
        auto* rect = qgraphicsitem_cast<QGraphicsRectItem*>(item);
        if (rect && rect->brush().color() == overlap_color())
            ++n;
    }
    return n;
}

// The folder of a real run whose name contains `scenario`.
fs::path real_run(const fs::path& results, const std::string& scenario) {
    for (const auto& e : fs::directory_iterator(results)) {
        if (e.path().filename().string().find(scenario) != std::string::npos)
            return e.path();
    }
    return {};
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A copy of a real run's folder as `to`, its summary.json changed by `edit`.
void copy_run(const fs::path& from, const fs::path& to,
              const std::function<void(nlohmann::json&)>& edit) {
    fs::create_directories(to.parent_path());
    fs::copy(from, to, fs::copy_options::recursive);
    auto summary = nlohmann::json::parse(read(to / "summary.json"));
    edit(summary);
    std::ofstream(to / "summary.json") << summary.dump();
}

// CIELAB distance (ΔE 1976): about 2 is the smallest difference a person notices, 20 and more
// reads as another colour.
double delta_e(const QColor& a, const QColor& b) {
    const auto lab = [](const QColor& c) {
        const auto linear = [](double u) {
            return u > 0.04045 ? std::pow((u + 0.055) / 1.055, 2.4) : u / 12.92;
        };
        const double r = linear(c.redF()), g = linear(c.greenF()), bl = linear(c.blueF());
        const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047;
        const double y = 0.2126 * r + 0.7152 * g + 0.0722 * bl;
        const double z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
        const auto f = [](double t) {
            return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116;
        };
        return std::array<double, 3>{116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
    };
    const auto p = lab(a);
    const auto q = lab(b);
    return std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

class DashboardViewTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { results_ = testing::test_results(); }

    // A fresh, shown window on `dir`, laid out at a fixed size.
    std::unique_ptr<MainWindow> open(const fs::path& dir) {
        auto w = std::make_unique<MainWindow>(QString::fromStdString(dir.string()));
        w->resize(1200, 800);
        w->show();
        QApplication::processEvents();
        return w;
    }

    // A scratch folder per test, removed afterwards.
    fs::path scratch() { return scratch_.path(); }

    static inline fs::path results_;
    lockbench::testing::TempDir scratch_;
};

TEST_F(DashboardViewTest, VerdictMatrixHasACellPerScenarioAndStrategyThatOpensItsRun) {
    auto w = open(results_);
    EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
    VerdictMatrixView* m = w->verdictMatrix();
    ASSERT_EQ(m->rowCount(), 2);
    ASSERT_EQ(m->columnCount(), 2);
    const int calm = m->rowOf("calm");
    const int short_lease = m->rowOf("short-lease");
    const int px = m->columnOf("set_nx_px");
    const int del = m->columnOf("set_nx_px_del");
    ASSERT_TRUE(px >= 0 && del >= 0 && calm >= 0 && short_lease >= 0);
    EXPECT_EQ(m->runAt(short_lease, del), -1);
    EXPECT_EQ(m->cellState(short_lease, del), VerdictMatrixView::Cell::empty);
    const int run = m->runAt(short_lease, px);
    ASSERT_EQ(run, run_index(*w, "set_nx_px", "short-lease"));

    // short-lease expects set_nx_px to break mutual exclusion and it did: red (a violation) with
    // a ✓ (as expected), never the green of "safe".
    EXPECT_EQ(m->cellState(short_lease, px), VerdictMatrixView::Cell::violated);
    EXPECT_EQ(m->cellMark(short_lease, px), VerdictMatrixView::Mark::expected);
    EXPECT_EQ(m->item(short_lease, px)->background().color(),
              VerdictMatrixView::colorOf(VerdictMatrixView::Cell::violated));
    const QString text = m->item(short_lease, px)->text();
    EXPECT_TRUE(text.startsWith("✓ mutual exclusion")) << text.toStdString();
    const auto& summary = *w->scan().runs[static_cast<std::size_t>(run)].summary;
    EXPECT_TRUE(text.contains(QString("%1 violation").arg(summary.violation_count)))
        << text.toStdString();
    EXPECT_TRUE(
        m->item(short_lease, px)->toolTip().contains("expected: violates:mutual_exclusion"));
    EXPECT_EQ(m->cellState(calm, del), VerdictMatrixView::Cell::safe);
    EXPECT_EQ(m->cellMark(calm, del), VerdictMatrixView::Mark::expected);
    EXPECT_EQ(m->item(calm, del)->text(), "✓ safe");

    w->openRun(run_index(*w, "set_nx_px", "calm"));
    emit m->cellClicked(short_lease, px);
    EXPECT_EQ(w->currentRun(), run);
    EXPECT_EQ(w->tabs()->currentIndex(), MainWindow::timeline_tab);
}

TEST_F(DashboardViewTest, ThroughputDrawsOneLinePerStrategyOverTheRun) {
    auto w = open(results_);
    w->setScenario("calm");
    ThroughputView* v = w->throughputView();
    ASSERT_EQ(v->lineCount(), 2);
    ASSERT_EQ(v->chart()->series().size(), 2);  // no fault windows in these runs
    EXPECT_EQ(v->faultWindowCount(), 0);
    std::set<QString> names;
    double max_y = 0;
    for (QAbstractSeries* s : v->chart()->series()) {
        auto* line = qobject_cast<QLineSeries*>(s);
        ASSERT_NE(line, nullptr);
        names.insert(line->name());
        ASSERT_GE(line->count(), 1);
        for (const QPointF& p : line->points()) {
            EXPECT_GE(p.x(), v->axisX()->min());
            EXPECT_LE(p.x(), v->axisX()->max());
            max_y = std::max(max_y, p.y());
        }
        EXPECT_EQ(line->attachedAxes().size(), 2);
    }
    EXPECT_EQ(names, (std::set<QString>{"set_nx_px", "set_nx_px_del"}));
    EXPECT_DOUBLE_EQ(v->axisX()->min(), 0.0);
    EXPECT_GE(v->axisX()->max(), 1.0);  // --duration 1
    EXPECT_LT(v->axisX()->max(), 3.0);
    EXPECT_DOUBLE_EQ(v->axisY()->min(), 0.0);
    EXPECT_GT(max_y, 0.0);
    EXPECT_GE(v->axisY()->max(), max_y);

    w->setScenario("short-lease");
    EXPECT_EQ(v->lineCount(), 1);
}

TEST_F(DashboardViewTest, LatencyDrawsFourPercentilesPerStrategyForAcquireAndRelease) {
    auto w = open(results_);
    w->setScenario("calm");
    const dashboard::Run& run =
        w->scan().runs[static_cast<std::size_t>(run_index(*w, "set_nx_px", "calm"))];
    for (QChart* chart : {w->latencyView()->acquireChart(), w->latencyView()->releaseChart()}) {
        ASSERT_EQ(chart->series().size(), 1);
        auto* bars = qobject_cast<QBarSeries*>(chart->series().front());
        ASSERT_NE(bars, nullptr);
        ASSERT_EQ(bars->count(), 2);
        for (QBarSet* set : bars->barSets())
            EXPECT_EQ(set->count(), 4);
        QBarCategoryAxis* x = nullptr;
        QLogValueAxis* y = nullptr;
        for (QAbstractAxis* a : chart->axes()) {
            x = x ? x : qobject_cast<QBarCategoryAxis*>(a);
            y = y ? y : qobject_cast<QLogValueAxis*>(a);
        }
        ASSERT_TRUE(x && y);
        EXPECT_EQ(x->categories(), LatencyView::categories());
        for (QBarSet* set : bars->barSets()) {
            for (int i = 0; i < set->count(); ++i) {
                EXPECT_GE(set->at(i), y->min());
                EXPECT_LE(set->at(i), y->max());
            }
        }
    }
    auto* acquire = qobject_cast<QBarSeries*>(w->latencyView()->acquireChart()->series().front());
    for (QBarSet* set : acquire->barSets()) {
        if (set->label() == "set_nx_px") {
            EXPECT_DOUBLE_EQ(set->at(3), std::max(run.summary->acquire.max, 0.001));
        }
    }
}

// The whole acquire distribution of each run, from the latency-acquire.hgrm the run wrote: one
// line per strategy, its last point the file's last row below 100 %.
TEST_F(DashboardViewTest, LatencyDrawsEachRunsWholeAcquireDistributionFromItsHgrmFile) {
    auto w = open(results_);
    w->setScenario("calm");
    const dashboard::Run& run =
        w->scan().runs[static_cast<std::size_t>(run_index(*w, "set_nx_px", "calm"))];
    auto points = dashboard::load_percentile_distribution(run.dir / "latency-acquire.hgrm");
    ASSERT_TRUE(points);
    ASSERT_GT(points->size(), 2u);
    const dashboard::PercentilePoint& last = (*points)[points->size() - 2];  // before 100 %
    QChart* chart = w->latencyView()->distributionChart();
    std::set<QString> names;
    for (QAbstractSeries* s : chart->series()) {
        auto* line = qobject_cast<QLineSeries*>(s);
        ASSERT_NE(line, nullptr);
        names.insert(line->name());
        EXPECT_EQ(line->attachedAxes().size(), 2);
        ASSERT_GT(line->count(), 1);
        EXPECT_DOUBLE_EQ(line->at(0).x(), 1.0);  // percentile 0
        if (line->name() == "set_nx_px") {
            EXPECT_EQ(line->count(), static_cast<int>(points->size()) - 1);
            EXPECT_DOUBLE_EQ(line->at(line->count() - 1).x(), 1 / (1 - last.percentile));
            EXPECT_DOUBLE_EQ(line->at(line->count() - 1).y(), std::max(last.value_ms, 0.001));
        }
    }
    EXPECT_EQ(names, (std::set<QString>{"set_nx_px", "set_nx_px_del"}));
}

TEST_F(DashboardViewTest, TimelineDrawsTheKnownViolationInRedAndZoomsToIt) {
    auto w = open(results_);
    w->tabs()->setCurrentIndex(MainWindow::timeline_tab);
    TimelineView* v = w->timelineView();

    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "calm")));
    QApplication::processEvents();
    ASSERT_NE(v->timeline(), nullptr);
    EXPECT_GE(v->timeline()->rows(), 8u);
    EXPECT_GT(v->barCount(), 0);
    EXPECT_EQ(v->timeline()->overlap_count, 0u);
    EXPECT_EQ(v->redBarCount(), 0);
    EXPECT_EQ(red_items(v), 0);

    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "short-lease")));
    QApplication::processEvents();
    ASSERT_NE(v->timeline(), nullptr);
    ASSERT_GE(v->timeline()->overlap_count, 1u)
        << "a 2 ms lease under a 5 ms hold overlapped nothing";
    // The overlaps drawn are the checker's: the same count as the run's verdict.
    const auto summary = nlohmann::json::parse(read(
        w->scan().runs[static_cast<std::size_t>(run_index(*w, "set_nx_px", "short-lease"))].dir /
        "summary.json"));
    EXPECT_EQ(v->timeline()->overlap_count,
              summary["verdict"]["checks"]["mutual_exclusion"]["violations"].get<std::size_t>());
    EXPECT_GE(v->redBarCount(), 1);
    EXPECT_GE(red_items(v), 1);

    // The run opens at its story: the first incident is selected and the timeline shows it.
    const SummaryView& opened =
        *w->scan()
             .runs[static_cast<std::size_t>(run_index(*w, "set_nx_px", "short-lease"))]
             .summary;
    ASSERT_FALSE(opened.incidents.empty());
    ASSERT_NE(w->violationList()->currentItem(), nullptr);
    EXPECT_TRUE(w->violationList()->currentItem()->text().startsWith("[incident] k0: process "))
        << w->violationList()->currentItem()->text().toStdString();
    {
        const auto [i0, i1] = incident_window(opened.incidents.front());
        const auto [z0, z1] = v->timeWindow();
        EXPECT_LE(z0, i0);
        EXPECT_GE(z1, i1);
        EXPECT_LT(z1 - z0, v->timeline()->end_ns);  // zoomed in, not the whole run
        EXPECT_TRUE(v->highlighted().count(opened.incidents.front().process));
    }
    // Beside it, the run's story: story.txt as lockbench wrote it, starting with the incident.
    const std::string story = read(
        w->scan().runs[static_cast<std::size_t>(run_index(*w, "set_nx_px", "short-lease"))].dir /
        "story.txt");
    EXPECT_EQ(w->storyPanel()->toPlainText().toStdString(), story);
    EXPECT_EQ(story.rfind("k0: process " + std::to_string(opened.incidents.front().process) +
                              "'s lock was granted",
                          0),
              0u)
        << story;
    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "calm")));
    EXPECT_TRUE(w->storyPanel()->toPlainText().startsWith("No violation"));
    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "short-lease")));

    v->showAll();
    const auto [full0, full1] = v->timeWindow();

    // The violation list says what the checker said, with its exact count.
    QListWidget* list = w->violationList();
    ASSERT_GE(list->count(), 1);
    const int first_witness = static_cast<int>(
        opened.incidents.size() + (opened.incident_count > opened.incidents.size() ? 1 : 0));
    ASSERT_GT(list->count(), first_witness);
    EXPECT_TRUE(list->item(first_witness)->text().startsWith("[mutual exclusion] k0: process "))
        << list->item(first_witness)->text().toStdString();
    const auto listed = summary["verdict"]["violations"].size();
    std::size_t all = 0;  // every check's exact count
    for (const auto& [name, check] : summary["verdict"]["checks"].items()) {
        if (check.contains("violations"))
            all += check["violations"].get<std::size_t>();
    }
    // The exact count is said whenever the checker listed fewer than it found, and only then.
    const auto count_lines =
        list->findItems(
                QString("… %1 violations in all (the checker lists %2)").arg(all).arg(listed),
                Qt::MatchExactly)
            .size();
    EXPECT_EQ(count_lines, all > listed ? 1 : 0) << all << " found, " << listed << " listed";

    // The overlaps are listed too; selecting one zooms to its two holds.
    int first_overlap = -1;
    for (int i = 0; i < list->count() && first_overlap < 0; ++i) {
        if (list->item(i)->text().startsWith("overlap on k0"))
            first_overlap = i;
    }
    ASSERT_GE(first_overlap, 0);
    list->setCurrentRow(first_overlap);
    const Overlap& o = v->timeline()->overlaps.front();
    const auto [t0, t1] = v->timeWindow();
    EXPECT_LE(t0, o.start_ns);
    EXPECT_GE(t1, o.end_ns);
    EXPECT_LT(t1 - t0, full1 - full0);
    EXPECT_EQ(v->highlighted().size(), 2u);
    EXPECT_TRUE(v->highlighted().count(v->timeline()->holds[o.a].process));
    EXPECT_GE(red_items(v), 2);  // both holds of the pair, now at least a pixel each

    v->showAll();
    EXPECT_EQ(v->timeWindow(), std::make_pair(full0, full1));
    v->setColorBy(TimelineView::ColorBy::strategy);
    EXPECT_GE(red_items(v), 1);  // red means overlap in either colouring
}

// Fault windows and checker witnesses are not produced by the engine yet (the nemesis and the
// checker are later issues), so this run is a real one with both added in their announced shape.
TEST_F(DashboardViewTest, FaultWindowsNemesisMarksAndCheckerWitnessesAreDrawn) {
    fs::path dir = scratch();
    fs::path real = real_run(results_, "calm");
    fs::path run = dir / real.filename();
    fs::copy(real, run);
    auto summary = nlohmann::json::parse(read(run / "summary.json"));
    summary["faults"] = nlohmann::json::parse(
        R"([{"fault": "pause-client", "start_s": 0.2, "end_s": 0.5,
             "target": {"client": 3, "process": 3}, "new": 1}])");
    const std::int64_t w0 = 300'000'000;
    const std::int64_t w1 = 300'400'000;
    summary["verdict"] = {{"valid", false},
                          {"violations",
                           {{{"kind", "mutual_exclusion"},
                             {"key", "k0"},
                             {"witness",
                              {{"a", {{"process", 1}, {"start", w0}, {"end", w1 - 100'000}}},
                               {"b", {{"process", 2}, {"start", w0 + 100'000}, {"end", w1}}}}}}}}};
    std::ofstream(run / "summary.json") << summary.dump();
    // Nemesis events go where their time puts them (the history is in time order), and every
    // event after it is renumbered.
    std::istringstream in(read(run / "history.jsonl"));
    std::ofstream out(run / "history.jsonl");
    bool paused = false;
    std::int64_t index = 0;
    for (std::string line; std::getline(in, line);) {
        auto e = nlohmann::ordered_json::parse(line);
        if (!paused && e["time"].get<std::int64_t>() > 200'000'000) {
            out << R"({"index":)" << index++
                << R"(,"type":"info","process":"nemesis","f":"pause","value":{"target":3},"time":200000000})"
                << "\n";
            paused = true;
        }
        e["index"] = index++;
        out << e.dump() << "\n";
    }
    out.close();

    auto w = open(dir);
    EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
    ThroughputView* tv = w->throughputView();
    EXPECT_EQ(tv->lineCount(), 1);
    EXPECT_EQ(tv->faultWindowCount(), 1);
    ASSERT_EQ(tv->chart()->series().size(), 2);
    auto* area = qobject_cast<QAreaSeries*>(tv->chart()->series().front());
    ASSERT_NE(area, nullptr);
    // In words from the fault's fields, not its JSON.
    EXPECT_EQ(area->name(), "fault: pause client 3 (process 3)");
    EXPECT_DOUBLE_EQ(area->lowerSeries()->at(0).x(), 0.2);
    EXPECT_DOUBLE_EQ(area->upperSeries()->at(1).x(), 0.5);
    EXPECT_DOUBLE_EQ(area->upperSeries()->at(0).y(), tv->axisY()->max());

    TimelineView* v = w->timelineView();
    ASSERT_NE(v->timeline(), nullptr);
    ASSERT_EQ(v->timeline()->nemesis.size(), 1u);
    EXPECT_EQ(v->nemesisMarkCount(), 1);
    int fault_rects = 0;
    for (QGraphicsItem* item : v->scene()->items()) {
        if (item->data(TimelineView::kKindRole).toInt() == TimelineView::fault_window &&
            qgraphicsitem_cast<QGraphicsRectItem*>(item)) {
            ++fault_rects;
            EXPECT_EQ(item->toolTip(), "pause client 3 (process 3)");
        }
    }
    EXPECT_EQ(fault_rects, 1);

    // The checker's violation comes first in the list; selecting it zooms to its witness.
    QListWidget* list = w->violationList();
    ASSERT_TRUE(list->item(0)->text().startsWith("[mutual exclusion] on k0"))
        << list->item(0)->text().toStdString();
    list->setCurrentRow(0);
    const auto [t0, t1] = v->timeWindow();
    EXPECT_LE(t0, w0);
    EXPECT_GE(t1, w1);
    EXPECT_LT(t1 - t0, 10'000'000);
    EXPECT_EQ(v->highlighted(), (std::set<std::int64_t>{1, 2}));
    EXPECT_EQ(v->nemesisMarkCount(), 0);  // the pause at 200 ms is outside the zoom
}

TEST_F(DashboardViewTest, BigHistoriesAreReadOffTheGuiThread) {
    auto w = open(results_);
    w->setAsyncThreshold(0);  // treat every history as big
    const int run = run_index(*w, "set_nx_px", "short-lease");
    QEventLoop wait;
    int loaded = -1;
    QObject::connect(w.get(), &MainWindow::historyLoaded, &wait, [&](int i) {
        loaded = i;
        wait.quit();
    });
    ASSERT_TRUE(w->openRun(run));
    EXPECT_TRUE(w->loading());
    EXPECT_EQ(w->timelineView()->timeline(), nullptr);  // the "reading …" message meanwhile
    QTimer::singleShot(20'000, &wait, &QEventLoop::quit);
    wait.exec();
    ASSERT_EQ(loaded, run);
    ASSERT_NE(w->timelineView()->timeline(), nullptr);
    EXPECT_GE(w->timelineView()->redBarCount(), 1);
}

// A real ramp (lockbench run --clients-ramp): one line per strategy on each of the three charts,
// one point per client count, the numbers ramp.json holds.
TEST_F(DashboardViewTest, ScalabilityDrawsTheNewestRampsCurves) {
    const fs::path results = scratch() / "results";
    const std::string cmd = std::string("'") + LOCKBENCH_BINARY +
                            "' run --clients-ramp 1,4 --strategy set_nx_px,fenced --keys 2 "
                            "--lease-ms 5000 --duration 0.5 --out '" +
                            results.string() + "' > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    auto w = open(results);
    ScalabilityView* v = w->scalabilityView();
    ASSERT_EQ(w->scan().ramps.size(), 1u);
    EXPECT_TRUE(w->scan().runs.empty());  // a ramp's runs are its points, not matrix cells
    EXPECT_EQ(v->lineCount(), 6);
    const Ramp& ramp = w->scan().ramps.front();
    for (QChart* chart : {v->throughputChart(), v->latencyChart(), v->fairnessChart()}) {
        int lines = 0;
        for (QAbstractSeries* s : chart->series()) {
            auto* line = qobject_cast<QLineSeries*>(s);
            if (!line || qobject_cast<QScatterSeries*>(s))
                continue;
            ++lines;
            ASSERT_EQ(line->count(), 2) << line->name().toStdString();
            EXPECT_EQ(line->at(0).x(), 1);
            EXPECT_EQ(line->at(1).x(), 4);
            if (chart == v->throughputChart()) {
                const auto& points = ramp.curves.at(line->name().toStdString());
                EXPECT_DOUBLE_EQ(line->at(1).y(), points[1].cycles_per_s);
            }
        }
        EXPECT_EQ(lines, 2);
    }
    // No ramp: the view says how to make one instead of drawing nothing.
    auto empty = open(results_);
    EXPECT_EQ(empty->scalabilityView()->lineCount(), 0);
}

TEST_F(DashboardViewTest, ScreenshotsOfEveryViewAreWrittenAndNotBlank) {
    auto w = open(results_);
    fs::path out = scratch() / "png";
    QString error;
    QStringList files = w->renderScreenshots(QString::fromStdString(out.string()), &error);
    ASSERT_EQ(files.size(), 6) << error.toStdString();
    for (const QString& f : files) {
        QImage img(f);
        ASSERT_FALSE(img.isNull()) << f.toStdString();
        EXPECT_EQ(img.size(), w->size() * w->devicePixelRatio());
        std::set<QRgb> colours;
        for (int y = 0; y < img.height(); y += 7) {
            for (int x = 0; x < img.width(); x += 7)
                colours.insert(img.pixel(x, y));
        }
        EXPECT_GT(colours.size(), 8u) << f.toStdString() << " looks blank";
    }
}

TEST_F(DashboardViewTest, MalformedResultsShowMessagesNamingTheFilesAndDoNotCrash) {
    fs::path dir = scratch();
    fs::path run = dir / "20260101T000000Z-broken";
    fs::create_directories(run);
    std::ofstream(run / "summary.json") << "{\"strategy\": \"set_nx_px\", garbage";
    // Five good lines from a real history, then one cut off mid-object.
    fs::path real = real_run(results_, "calm");
    ASSERT_FALSE(real.empty());
    std::istringstream lines(read(real / "history.jsonl"));
    std::ofstream history(run / "history.jsonl");
    for (int i = 0; i < 5; ++i) {
        std::string line;
        std::getline(lines, line);
        history << line << "\n";
    }
    history << R"({"index":5,"type":"ok","process":3,"f":"acq)";
    history.close();

    auto w = open(dir);
    EXPECT_TRUE(w->messageBar()->isVisible());
    const std::string text = w->messageBar()->text().toStdString();
    EXPECT_NE(text.find("20260101T000000Z-broken/summary.json: "), std::string::npos) << text;
    EXPECT_NE(text.find("20260101T000000Z-broken/history.jsonl:6: "), std::string::npos) << text;
    EXPECT_EQ(w->timelineView()->timeline(), nullptr);
    EXPECT_EQ(w->throughputView()->lineCount(), 0);
    QString error;
    EXPECT_EQ(w->renderScreenshots(QString::fromStdString((dir / "png").string()), &error).size(),
              6);
}

TEST_F(DashboardViewTest, EmptyFolderSaysThereAreNoRuns) {
    auto w = open(scratch());
    EXPECT_TRUE(w->messageBar()->isVisible());
    EXPECT_TRUE(w->messageBar()->text().contains("no runs yet"));
    EXPECT_EQ(w->verdictMatrix()->rowCount(), 0);
    EXPECT_EQ(w->throughputView()->lineCount(), 0);
    EXPECT_EQ(w->timelineView()->timeline(), nullptr);
}

TEST_F(DashboardViewTest, LiveRunIsFollowedAsItGrowsAndThenAsItsFinishedFolder) {
    fs::path dir = scratch();
    fs::path real = real_run(results_, "short-lease");
    ASSERT_FALSE(real.empty());
    const std::string history = read(real / "history.jsonl");
    // Cut mid-line, as a reader racing the engine's writer sees it.
    const std::size_t half = history.size() / 2;
    fs::path tmp = dir / ".tmp-20260101T000000Z-short-lease-4242";
    fs::create_directories(tmp);
    std::ofstream(tmp / "history.jsonl") << history.substr(0, half);

    auto w = open(dir);
    ASSERT_EQ(w->currentRun(), 0);
    ASSERT_TRUE(w->scan().runs[0].in_progress);
    EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
    const std::size_t events_before = w->timelineView()->timeline()->events;
    EXPECT_GT(events_before, 0u);
    EXPECT_FALSE(w->pollLive());  // nothing new yet

    std::ofstream(tmp / "history.jsonl", std::ios::app) << history.substr(half);
    ASSERT_TRUE(w->pollLive());
    const std::size_t events_after = w->timelineView()->timeline()->events;
    EXPECT_GT(events_after, events_before);
    EXPECT_GE(w->timelineView()->timeline()->overlap_count, 1u);
    // Throughput so far, from the history (there is no summary.json yet).
    w->setScenario("short-lease");
    ASSERT_EQ(w->throughputView()->lineCount(), 1);
    auto* line = qobject_cast<QLineSeries*>(w->throughputView()->chart()->series().front());
    ASSERT_NE(line, nullptr);
    EXPECT_EQ(line->name(), "live");
    ASSERT_GE(line->count(), 2);
    EXPECT_GT(line->at(0).y(), 0.0);

    // The engine renames the folder when the run ends; the window moves to the finished run.
    for (const char* f : {"summary.json", "workload.json"})
        fs::copy_file(real / f, tmp / f);
    fs::rename(tmp, dir / "20260101T000001Z-short-lease");
    ASSERT_TRUE(w->pollLive());
    ASSERT_GE(w->currentRun(), 0);
    const dashboard::Run& now = w->scan().runs[static_cast<std::size_t>(w->currentRun())];
    EXPECT_EQ(now.name, "20260101T000001Z-short-lease");
    EXPECT_FALSE(now.in_progress);
    EXPECT_EQ(w->timelineView()->timeline()->events, events_after);
    EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
}

// Every strategy lockbench ships (the registry's and the adapters') has its own colour, clearly
// apart from every other one and from the red of a violation: two lines on one chart never look
// alike (set_nx_px_del and set_nx_px_wait did).
TEST(ChartStyleTest, EveryStrategyHasItsOwnClearlyDistinctColour) {
    std::vector<QString> names;
    for (const auto& s : all_strategies())
        names.push_back(QString::fromUtf8(s.name.data(), static_cast<qsizetype>(s.name.size())));
    for (const auto& a : shipped_adapters())
        names.push_back(QString::fromStdString(a.name));
    const auto& own = strategies_with_own_color();
    for (const QString& n : names) {
        EXPECT_NE(std::find(own.begin(), own.end(), n), own.end())
            << n.toStdString() << " has no colour of its own";
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_GE(delta_e(strategy_color(names[i]), overlap_color()), 25) << names[i].toStdString();
        for (std::size_t j = i + 1; j < names.size(); ++j) {
            EXPECT_GE(delta_e(strategy_color(names[i]), strategy_color(names[j])), 25)
                << names[i].toStdString() << " and " << names[j].toStdString();
        }
    }
    EXPECT_GE(delta_e(strategy_color("set_nx_px_del"), strategy_color("set_nx_px_wait")), 25);
    // Stable: an unknown name gets the same colour every time.
    EXPECT_EQ(strategy_color("some-new-adapter"), strategy_color("some-new-adapter"));
}

// 80 scenarios do not fit an 800-pixel window: the picture of the matrix grows until every row is
// in it, the other pictures keep the window's size, and the window is its old size afterwards.
TEST_F(DashboardViewTest, VerdictScreenshotShowsTheWholeMatrix) {
    const fs::path dir = scratch() / "many";
    const fs::path real = real_run(results_, "calm");
    ASSERT_FALSE(real.empty());
    constexpr int kScenarios = 80;
    for (int i = 0; i < kScenarios; ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "20260101T0000%02dZ-scenario-%02d", i, i);
        copy_run(real, dir / name,
                 [&](nlohmann::json& j) { j["scenario"] = std::string(name).substr(17); });
    }
    auto w = open(dir);
    ASSERT_EQ(w->verdictMatrix()->rowCount(), kScenarios);
    const QSize window = w->size();
    QString error;
    const QStringList files =
        w->renderScreenshots(QString::fromStdString((scratch() / "png").string()), &error);
    ASSERT_EQ(files.size(), 6) << error.toStdString();
    EXPECT_EQ(w->size(), window);
    const qreal dpr = w->devicePixelRatio();
    QImage verdicts(files[0]);
    ASSERT_FALSE(verdicts.isNull());
    EXPECT_EQ(verdicts.width(), qRound(window.width() * dpr));
    VerdictMatrixView* m = w->verdictMatrix();
    const int rows_height = m->verticalHeader()->length() + m->horizontalHeader()->height();
    EXPECT_GE(verdicts.height(), qRound((window.height() + rows_height - m->height()) * dpr));
    EXPECT_GT(verdicts.height(), qRound(window.height() * dpr));
    // The last row is in the picture: the lowest pixel of a safe (green) cell is below where the
    // window ended.
    const QRgb safe = VerdictMatrixView::colorOf(VerdictMatrixView::Cell::safe).rgb();
    int lowest_green = -1;
    for (int y = verdicts.height() - 1; y >= 0 && lowest_green < 0; --y) {
        for (int x = 0; x < verdicts.width(); x += 3) {
            if (verdicts.pixel(x, y) == safe) {
                lowest_green = y;
                break;
            }
        }
    }
    EXPECT_GT(lowest_green, qRound(window.height() * dpr));
    const int last_row_height = m->rowHeight(kScenarios - 1);
    EXPECT_GE(lowest_green, verdicts.height() - qRound(2 * last_row_height * dpr));
    for (int i = 1; i < files.size(); ++i)
        EXPECT_EQ(QImage(files[i]).size(), window * dpr) << files[i].toStdString();
}

// Opened without --run, the window shows one run in the timeline: the Scenario box names its
// scenario, and choosing another scenario opens one of its runs.
TEST_F(DashboardViewTest, TimelineAndScenarioBoxNameTheSameScenario) {
    auto w = open(results_);
    ASSERT_GE(w->currentRun(), 0);
    const auto scenario_of_run = [&] {
        return QString::fromStdString(
            w->scan().runs[static_cast<std::size_t>(w->currentRun())].scenario());
    };
    // The run with violations opens first, though "calm" sorts first in the box.
    EXPECT_EQ(scenario_of_run(), "short-lease");
    EXPECT_EQ(w->scenario(), "short-lease");
    w->setScenario("calm");
    ASSERT_GE(w->currentRun(), 0);
    EXPECT_EQ(scenario_of_run(), "calm");
    EXPECT_EQ(w->throughputView()->lineCount(), 2);
    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "short-lease")));
    EXPECT_EQ(w->scenario(), "short-lease");
    EXPECT_EQ(w->throughputView()->lineCount(), 1);
}

// The story's lines are up to 100 columns and its swimlane is drawn in columns: all of it shows
// in the pane, unwrapped, nothing behind a horizontal scrollbar.
TEST_F(DashboardViewTest, StoryIsNotCutOffOnTheRight) {
    auto w = open(results_);
    w->tabs()->setCurrentIndex(MainWindow::timeline_tab);
    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "short-lease")));
    QApplication::processEvents();
    QPlainTextEdit* story = w->storyPanel();
    ASSERT_FALSE(story->toPlainText().isEmpty());
    const QFontMetricsF metrics(story->font());
    qreal longest = 0;
    for (const QString& line : story->toPlainText().split('\n'))
        longest = std::max(longest, metrics.horizontalAdvance(line));
    ASSERT_GT(longest, 0);
    EXPECT_EQ(story->horizontalScrollBar()->maximum(), 0);
    // Not by wrapping: the swimlane's columns stay lined up.
    EXPECT_EQ(story->lineWrapMode(), QPlainTextEdit::NoWrap);
    EXPECT_LE(longest, story->viewport()->width());
    EXPECT_GE(story->font().pointSizeF(), 7);
    // A narrower pane still shows it all.
    w->resize(900, 800);
    QApplication::processEvents();
    EXPECT_EQ(story->horizontalScrollBar()->maximum(), 0);
}

// The texts of the timeline's axis labels as drawn.
QStringList axis_texts(TimelineView* v) {
    static const QRegularExpression tick("^-?[0-9.]+ (s|ms|µs|ns)$");
    QStringList out;
    for (QGraphicsItem* item : v->scene()->items(Qt::AscendingOrder)) {
        auto* text = qgraphicsitem_cast<QGraphicsSimpleTextItem*>(item);
        if (text && item->data(TimelineView::kKindRole).toInt() == TimelineView::axis &&
            tick.match(text->text()).hasMatch())
            out << text->text();
    }
    return out;
}

QSet<QString> units_of(const QStringList& labels) {
    QSet<QString> units;
    for (const QString& l : labels)
        units.insert(l.section(' ', 1));
    return units;
}

TEST(TimelineAxisTest, EveryLabelOfAnAxisIsInOneUnit) {
    EXPECT_EQ(axis_labels(0, 1'000'000'000, 200'000'000),
              (QStringList{"0.0 s", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1.0 s"}));
    EXPECT_EQ(axis_labels(0, 1'500'000'000, 500'000'000),
              (QStringList{"0.0 s", "0.5 s", "1.0 s", "1.5 s"}));
    EXPECT_EQ(axis_labels(1'000'000, 3'000'000, 1'000'000), (QStringList{"1 ms", "2 ms", "3 ms"}));
    EXPECT_EQ(axis_labels(1'332'000'000, 1'332'200'000, 50'000'000 / 1000),
              (QStringList{"1.33200 s", "1.33205 s", "1.33210 s", "1.33215 s", "1.33220 s"}));
    EXPECT_EQ(axis_labels(0, 900, 300), (QStringList{"0 ns", "300 ns", "600 ns", "900 ns"}));
}

TEST_F(DashboardViewTest, TimelineAxisLabelsShareOneUnitAtEveryZoom) {
    auto w = open(results_);
    w->tabs()->setCurrentIndex(MainWindow::timeline_tab);
    ASSERT_TRUE(w->openRun(run_index(*w, "set_nx_px", "calm")));
    QApplication::processEvents();
    TimelineView* v = w->timelineView();
    v->showAll();
    QStringList labels = axis_texts(v);
    ASSERT_GE(labels.size(), 3) << labels.join(", ").toStdString();
    EXPECT_TRUE(labels.front().startsWith("0")) << labels.join(", ").toStdString();
    EXPECT_EQ(units_of(labels).size(), 1) << labels.join(", ").toStdString();
    v->setTimeWindow(100'000, 900'000);
    labels = axis_texts(v);
    ASSERT_GE(labels.size(), 3);
    EXPECT_EQ(units_of(labels), QSet<QString>{"µs"}) << labels.join(", ").toStdString();
}

// No expectation is not an unknown verdict: "–" (tooltip: no expectation), never "?".
TEST_F(DashboardViewTest, ARunWithoutAnExpectationShowsADashNotAQuestionMark) {
    const fs::path dir = scratch() / "results";
    const fs::path real = real_run(results_, "calm");
    copy_run(real, dir / "20260101T000000Z-calm", [](nlohmann::json& j) {
        j.erase("expected");
        j.erase("as_expected");
    });
    copy_run(real, dir / "20260101T000001Z-other", [](nlohmann::json& j) {
        j["scenario"] = "other";
        j["expected"] = "safe";
        j["as_expected"] = nullptr;
    });
    auto w = open(dir);
    VerdictMatrixView* m = w->verdictMatrix();
    const int col = m->columnOf(QString::fromStdString(w->scan().runs[0].strategy()));
    const int none = m->rowOf("calm");
    const int unknown = m->rowOf("other");
    ASSERT_TRUE(col >= 0 && none >= 0 && unknown >= 0);
    EXPECT_EQ(m->cellMark(none, col), VerdictMatrixView::Mark::no_expectation);
    EXPECT_EQ(m->item(none, col)->text(), "– safe");
    EXPECT_TRUE(m->item(none, col)->toolTip().contains("no expectation"))
        << m->item(none, col)->toolTip().toStdString();
    EXPECT_EQ(VerdictMatrixView::markOf(VerdictMatrixView::Mark::no_expectation), "–");
    EXPECT_EQ(m->cellMark(unknown, col), VerdictMatrixView::Mark::unknown);
    EXPECT_TRUE(m->item(unknown, col)->text().startsWith("? safe"))
        << m->item(unknown, col)->text().toStdString();
}

// Five runs of one cell (repeats, or other settings), three of them violated: the cell says so
// and is red, though the newest run was safe; a click opens the newest violated run.
TEST_F(DashboardViewTest, ACellOverSeveralRunsCountsThem) {
    const fs::path dir = scratch() / "results";
    const fs::path real = real_run(results_, "short-lease");
    const fs::path calm = real_run(results_, "calm");
    for (int i = 0; i < 5; ++i) {
        const bool violated = i == 1 || i == 2 || i == 3;
        const std::string name = "20260101T00000" + std::to_string(i) + "Z-short-lease";
        // A safe run: a calm run's verdict under short-lease's name.
        copy_run(violated ? real : calm, dir / name, [&](nlohmann::json& j) {
            j["scenario"] = "short-lease";
            j["strategy"] = "set_nx_px";
            j["expected"] = "violates:mutual_exclusion";
            j["as_expected"] = violated;
        });
    }
    auto w = open(dir);
    VerdictMatrixView* m = w->verdictMatrix();
    ASSERT_EQ(m->rowCount(), 1);
    ASSERT_EQ(m->columnCount(), 1);
    EXPECT_EQ(m->cellState(0, 0), VerdictMatrixView::Cell::violated);
    EXPECT_EQ(m->cellMark(0, 0), VerdictMatrixView::Mark::unexpected);
    const QString text = m->item(0, 0)->text();
    EXPECT_TRUE(text.contains("\n3 of 5 violated")) << text.toStdString();
    EXPECT_TRUE(text.startsWith("✗ mutual exclusion")) << text.toStdString();
    const int run = m->runAt(0, 0);
    ASSERT_GE(run, 0);
    EXPECT_EQ(w->scan().runs[static_cast<std::size_t>(run)].name, "20260101T000003Z-short-lease");
    const QString tip = m->item(0, 0)->toolTip();
    for (int i = 0; i < 5; ++i)
        EXPECT_TRUE(tip.contains(QString("20260101T00000%1Z-short-lease: ").arg(i)))
            << tip.toStdString();
}

// A folder of ramps only, or a ramp's own folder, opens on its points: the Scalability tab with
// a line per strategy, and the folder line says how many points there are.
TEST_F(DashboardViewTest, ARampFolderOpensOnItsPoints) {
    const fs::path results = scratch() / "results";
    const fs::path ramp = results / "ramp-20260101T000000Z-calm";
    fs::create_directories(ramp);
    lockbench::RampFile written{.scenario = "calm", .clients = {1, 4}, .duration_s = 1};
    const auto point = [](int clients, double cycles_per_s, double p50, double p99) {
        return lockbench::RampPoint{.clients = clients,
                                    .cycles_per_s = cycles_per_s,
                                    .acquire_p50_ms = p50,
                                    .acquire_p99_ms = p99,
                                    .fairness = {.clients = static_cast<std::uint64_t>(clients)}};
    };
    written.curves["set_nx_px"] = {point(1, 100, 1, 2), point(4, 300, 2, 5)};
    written.curves["fenced"] = {point(1, 90, 1, 3), point(4, 250, 2, 6)};
    std::ofstream(ramp / "ramp.json") << written.to_json().dump();
    for (const fs::path& dir : {results, ramp}) {
        auto w = open(dir);
        EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
        ASSERT_EQ(w->scan().ramps.size(), 1u) << dir;
        EXPECT_EQ(w->scan().ramps.front().name, "ramp-20260101T000000Z-calm");
        EXPECT_TRUE(w->scan().runs.empty());
        EXPECT_EQ(w->tabs()->currentIndex(), MainWindow::scalability_tab);
        EXPECT_EQ(w->scalabilityView()->lineCount(), 6);
        const QString folder_line = w->folderLabel()->text();
        EXPECT_TRUE(folder_line.endsWith("— 0 runs · 1 ramp, 4 points on the Scalability tab"))
            << folder_line.toStdString();
    }
}

// compare.json as its one writer (lockbench::CompareFile::to_json) writes it: a 3 × 2 sweep of
// two strategies. set_nx_px breaks wherever the pause outlasts the lease; fenced never does.
nlohmann::json a_compare_json() {
    const auto counts = [](int violated, int runs) {
        return lockbench::CompareCounts{.violated = violated,
                                        .valid = runs - violated,
                                        .runs = runs,
                                        .violation_rate = static_cast<double>(violated) / runs,
                                        .wilson_95 = {violated ? 0.2 : 0.0, violated ? 1.0 : 0.43}};
    };
    const auto stats = [&](int broke, double cycles_per_s, double p99_ms,
                           const std::string& reading) {
        return lockbench::CompareStrategyStats{
            .runs = 5,
            .verdict = counts(broke, 5),
            .checks = {{"mutual_exclusion", counts(broke, 5)}},
            .cycles_per_s = {.median = cycles_per_s,
                             .min = cycles_per_s - 20,
                             .max = cycles_per_s + 10},
            .acquire_p99_ms = {.median = p99_ms, .min = 2.0, .max = p99_ms + 1},
            .reading = reading};
    };
    lockbench::CompareFile c;
    c.scenario = "t1-holder-paused";
    c.strategies = {"set_nx_px", "fenced"};
    c.repeat = 5;
    c.duration_s = 1.0;
    c.seed = 1;
    c.sweep = {{.field = "lease_ms", .path = "lease_ms", .values = {300, 1000, 3000}},
               {.field = "pause_ms", .path = "faults[0].duration_ms", .values = {200, 1500}}};
    for (double pause : {200.0, 1500.0}) {
        for (double lease : c.sweep[0].values) {
            const int broke = pause > lease ? 5 : 0;
            c.settings.push_back(
                {.at = {{"lease_ms", lease}, {"faults[0].duration_ms", pause}},
                 .strategies = {
                     {"set_nx_px",
                      stats(broke, 120.0, 2.5, "set_nx_px broke mutual exclusion in 5 of 5 runs")},
                     {"fenced", stats(0, 90.0, 3.0, "fenced kept every check in 5 of 5 runs")}}});
        }
    }
    c.runs_planned = 60;
    c.runs_done = 60;
    c.complete = true;
    c.reading = "set_nx_px violated something at 2 of 6 settings";
    return c.to_json();
}

// The Compare tab reads a comparison's folder: the table of k of n per strategy, and a heat map
// per strategy over the sweep, cells coloured by the violation rate.
TEST_F(DashboardViewTest, CompareTabShowsTheNewestComparisonsCountsAndHeatMaps) {
    const fs::path results = scratch() / "results";
    const fs::path compare = results / "compare-20260101T000000Z-t1-holder-paused";
    fs::create_directories(compare);
    std::ofstream(compare / "compare.json") << a_compare_json().dump(2);
    // Its runs are ordinary runs: the matrix counts them.
    copy_run(real_run(results_, "short-lease"), compare / "20260101T000001Z-t1-holder-paused",
             [](nlohmann::json& j) { j["scenario"] = "t1-holder-paused"; });
    for (const fs::path& dir : {results, compare}) {
        auto w = open(dir);
        EXPECT_TRUE(w->messages().isEmpty()) << w->messages().join('\n').toStdString();
        ASSERT_EQ(w->scan().comparisons.size(), 1u) << dir;
        EXPECT_EQ(w->scan().runs.size(), 1u);
        EXPECT_TRUE(w->folderLabel()->text().endsWith("1 run · 1 comparison on the Compare tab"))
            << w->folderLabel()->text().toStdString();
        CompareView* v = w->compareView();
        EXPECT_TRUE(v->title()->text().startsWith(
            "compare-20260101T000000Z-t1-holder-paused: t1-holder-paused, 2 strategies × 5 "
            "runs each at 6 settings (the table sums them; the maps below show each)\n"
            "set_nx_px violated something at 2 of 6 settings"))
            << v->title()->text().toStdString();
        QTableWidget* table = v->summaryTable();
        ASSERT_EQ(table->rowCount(), 2);
        EXPECT_EQ(table->verticalHeaderItem(0)->text(), "set_nx_px");
        // Summed over the six settings: set_nx_px broke in two of them, 5 of 5 runs each.
        EXPECT_EQ(table->item(0, 0)->text(), "30");
        EXPECT_EQ(table->item(0, 1)->text(), "10 of 30");
        EXPECT_EQ(table->item(0, 1)->background().color(), CompareView::rateColor(10.0 / 30));
        EXPECT_EQ(table->item(1, 1)->text(), "0 of 30");

        ASSERT_EQ(v->heatMapCount(), 2);
        QTableWidget* map = v->heatMap("set_nx_px");
        ASSERT_NE(map, nullptr);
        ASSERT_EQ(map->columnCount(), 3);
        ASSERT_EQ(map->rowCount(), 2);
        EXPECT_EQ(map->horizontalHeaderItem(0)->text(), "lease_ms=300");
        EXPECT_EQ(map->verticalHeaderItem(1)->text(), "pause_ms=1500");
        // A pause of 1500 ms outlasts the 300 and 1000 ms leases, not the 3000 ms one.
        const QString expected[2][3] = {{"0/5", "0/5", "0/5"}, {"5/5", "5/5", "0/5"}};
        for (int r = 0; r < 2; ++r) {
            for (int c = 0; c < 3; ++c) {
                EXPECT_EQ(map->item(r, c)->text(), expected[r][c]) << r << "," << c;
                EXPECT_EQ(map->item(r, c)->background().color(),
                          CompareView::rateColor(expected[r][c] == "5/5" ? 1.0 : 0.0))
                    << r << "," << c;
            }
        }
        EXPECT_EQ(CompareView::rateColor(1.0),
                  VerdictMatrixView::colorOf(VerdictMatrixView::Cell::violated));
        EXPECT_EQ(CompareView::rateColor(0.0),
                  VerdictMatrixView::colorOf(VerdictMatrixView::Cell::safe));
        EXPECT_EQ(v->heatMap("fenced")->item(1, 0)->text(), "0/5");
    }
    // Without a sweep the table is the one setting's, with its interval, medians and reading.
    {
        auto one = a_compare_json();
        one["sweep"] = nlohmann::json::array();
        one["settings"] = nlohmann::json::array({one["settings"][3]});
        std::ofstream(compare / "compare.json") << one.dump();
        auto w = open(compare);
        QTableWidget* table = w->compareView()->summaryTable();
        ASSERT_EQ(table->rowCount(), 2);
        EXPECT_EQ(table->item(0, 0)->text(), "5");
        EXPECT_EQ(table->item(0, 1)->text(), "5 of 5 (100 %, 95 %: 20–100 %)");
        EXPECT_EQ(table->item(0, 2)->text(), "120");
        EXPECT_EQ(table->item(0, 3)->text(), "2.50");
        EXPECT_EQ(table->item(1, 4)->text(), "fenced kept every check in 5 of 5 runs");
        EXPECT_EQ(w->compareView()->heatMapCount(), 0);
    }
    // Its own folder opens on the Compare tab.
    EXPECT_EQ(open(compare)->tabs()->currentIndex(), MainWindow::compare_tab);
    // A format or version this dashboard does not know is a message naming the file, no table.
    auto j = a_compare_json();
    j["version"] = 2;
    std::ofstream(compare / "compare.json") << j.dump();
    auto w = open(results);
    EXPECT_TRUE(w->scan().comparisons.empty());
    EXPECT_TRUE(w->messages().join('\n').contains(
        "compare-20260101T000000Z-t1-holder-paused/compare.json: /version: 2 is not one this "
        "build reads (1)"))
        << w->messages().join('\n').toStdString();
    // Nor is a compare.json with a field missing: the message names it by its JSON path.
    j = a_compare_json();
    j["settings"][4]["strategies"]["fenced"].erase("verdict");
    std::ofstream(compare / "compare.json") << j.dump();
    w = open(results);
    EXPECT_TRUE(w->scan().comparisons.empty());
    EXPECT_TRUE(
        w->messages().join('\n').contains("compare-20260101T000000Z-t1-holder-paused/compare.json: "
                                          "/settings/4/strategies/fenced/verdict: missing"))
        << w->messages().join('\n').toStdString();
}

}  // namespace
}  // namespace lockbench::dashboard
