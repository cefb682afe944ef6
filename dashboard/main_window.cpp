#include "dashboard/main_window.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileSystemWatcher>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "dashboard/chart_style.hpp"
#include "dashboard/compare_view.hpp"
#include "dashboard/latency_view.hpp"
#include "dashboard/qt_text.hpp"
#include "dashboard/scalability_view.hpp"
#include "dashboard/throughput_view.hpp"
#include "dashboard/timeline_view.hpp"
#include "dashboard/verdict_matrix_view.hpp"

namespace lockbench::dashboard {
namespace {

constexpr int kViolationKindRole = Qt::UserRole;
constexpr int kViolationIndexRole = Qt::UserRole + 1;
enum ViolationSource { from_checker, from_overlap, from_incident, none };
// More rows than anyone reads; the timeline still shows every overlap in red.
constexpr std::size_t kMaxListedOverlaps = 1000;
constexpr int kMaxMessageLines = 8;

}  // namespace

MainWindow::MainWindow(const QString& results_dir, QWidget* parent)
    : QMainWindow(parent),
      results_dir_(results_dir),
      message_bar_(new QLabel),
      folder_label_(new QLabel),
      scenario_box_(new QComboBox),
      tabs_(new QTabWidget),
      matrix_(new VerdictMatrixView),
      throughput_(new ThroughputView),
      latency_(new LatencyView),
      scalability_(new ScalabilityView),
      compare_(new CompareView),
      timeline_(new TimelineView),
      run_box_(new QComboBox),
      color_box_(new QComboBox),
      run_label_(new QLabel),
      violations_(new QListWidget),
      story_(new QPlainTextEdit),
      watcher_(new QFileSystemWatcher(this)),
      rescan_timer_(new QTimer(this)),
      live_timer_(new QTimer(this)) {
    watchHistoryLoader();
    setWindowTitle(tr("lockbench dashboard — %1").arg(results_dir));
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    setUpMessageBar();
    layout->addWidget(message_bar_);
    layout->addLayout(makeFolderRow());
    addTabs();
    layout->addWidget(tabs_, 1);
    setCentralWidget(central);
    connectViews();
    watchResultsFolder();
    reload();
    openOnWhatTheFolderHolds();
}

void MainWindow::watchHistoryLoader() {
    loader_ = new QFutureWatcher<Loaded>(this);
    connect(loader_, &QFutureWatcher<Loaded>::finished, this, [this] {
        // The folder may have been rescanned (indices moved) or another run opened meanwhile.
        if (current_run_ >= 0 && !loading_run_.empty() &&
            scan_.runs[static_cast<std::size_t>(current_run_)].name == loading_run_)
            showLoaded(current_run_, loader_->result());
        loading_run_.clear();
    });
}

void MainWindow::setUpMessageBar() {
    message_bar_->setObjectName("messageBar");
    message_bar_->setWordWrap(true);
    message_bar_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_bar_->setStyleSheet(
        "QLabel { background: #fde2e2; color: #8a1111; border: 1px solid #e0a0a0; padding: 6px; }");
    message_bar_->hide();
}

QHBoxLayout* MainWindow::makeFolderRow() {
    auto* row = new QHBoxLayout;
    row->addWidget(folder_label_, 1);
    row->addWidget(new QLabel(tr("Scenario:")));
    scenario_box_->setMinimumContentsLength(16);
    row->addWidget(scenario_box_);
    return row;
}

// In the order of the Tab enum: renderScreenshots() names the pictures by it.
void MainWindow::addTabs() {
    tabs_->addTab(matrix_, tr("Verdicts"));
    tabs_->addTab(throughput_, tr("Throughput"));
    tabs_->addTab(latency_, tr("Latency"));
    tabs_->addTab(makeTimelinePage(), tr("Timeline"));
    tabs_->addTab(scalability_, tr("Scalability"));
    tabs_->addTab(compare_, tr("Compare"));
}

QWidget* MainWindow::makeTimelinePage() {
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(makeRunRow());
    auto* split = new QSplitter;
    setUpViolationList();
    // The story below the list and the timeline, across the whole width: its sentences cite the
    // history and its text swimlane is drawn in columns (up to 100), which a side pane cuts.
    auto* page_split = new QSplitter(Qt::Vertical);
    setUpStoryPanel();
    split->addWidget(violations_);
    split->addWidget(timeline_);
    split->setStretchFactor(1, 1);
    split->setSizes({380, 900});
    page_split->addWidget(split);
    page_split->addWidget(story_);
    page_split->setStretchFactor(0, 1);
    page_split->setSizes({420, 300});
    layout->addWidget(page_split, 1);
    return page;
}

QHBoxLayout* MainWindow::makeRunRow() {
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Run:")));
    run_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    row->addWidget(run_box_);
    row->addWidget(new QLabel(tr("Colour by:")));
    color_box_->addItems({tr("key"), tr("strategy")});
    row->addWidget(color_box_);
    run_label_->setTextFormat(Qt::RichText);
    row->addWidget(run_label_, 1);
    return row;
}

void MainWindow::setUpViolationList() {
    violations_->setMinimumWidth(220);
    // The checker's sentences are long (tokens, times): wrap them rather than cut them.
    violations_->setWordWrap(true);
    violations_->setTextElideMode(Qt::ElideNone);
    violations_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    violations_->setUniformItemSizes(false);
}

void MainWindow::setUpStoryPanel() {
    story_->setReadOnly(true);
    // The font shrinks until the longest line fits the pane (fitStory); only below a readable
    // size do lines wrap. A story cut off at the pane's right edge hides how it ends.
    story_->setLineWrapMode(QPlainTextEdit::NoWrap);
    story_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    story_->viewport()->installEventFilter(this);
    story_->setPlaceholderText(tr("No story.txt in this run (made by an older lockbench)."));
}

void MainWindow::connectViews() {
    // The Timeline tab and the Scenario box always name the same scenario: a timeline of one
    // scenario beside the charts of another reads as one story that is not.
    connect(scenario_box_, &QComboBox::currentTextChanged, this, [this](const QString& text) {
        refreshCharts();
        const bool agrees =
            current_run_ >= 0 &&
            qs(scan_.runs[static_cast<std::size_t>(current_run_)].scenario()) == text;
        if (!agrees)
            openRun(preferredRun(text.toStdString()));
    });
    connect(matrix_, &VerdictMatrixView::runActivated, this, [this](int run) {
        openRun(run);
        tabs_->setCurrentIndex(timeline_tab);
    });
    connect(run_box_, &QComboBox::activated, this,
            [this](int i) { openRun(run_box_->itemData(i).toInt()); });
    connect(color_box_, &QComboBox::currentIndexChanged, this, [this](int i) {
        timeline_->setColorBy(i == 0 ? TimelineView::ColorBy::key
                                     : TimelineView::ColorBy::strategy);
        fillViolations();  // the key legend comes and goes with the colouring
    });
    connect(violations_, &QListWidget::currentRowChanged, this,
            [this](int row) { violationSelected(row); });
}

void MainWindow::watchResultsFolder() {
    // Bursts of directory changes (a suite writing many runs) become one rescan.
    rescan_timer_->setSingleShot(true);
    rescan_timer_->setInterval(300);
    connect(rescan_timer_, &QTimer::timeout, this, [this] { reload(); });
    connect(watcher_, &QFileSystemWatcher::directoryChanged, this,
            [this] { rescan_timer_->start(); });
    live_timer_->setInterval(500);
    connect(live_timer_, &QTimer::timeout, this, [this] { pollLive(); });
}

void MainWindow::openOnWhatTheFolderHolds() {
    // A folder of ramps only (or a ramp's own folder) opens where its points are, not on an
    // empty matrix.
    if (scan_.runs.empty() && !scan_.ramps.empty())
        tabs_->setCurrentIndex(scalability_tab);
    // A comparison's own folder opens on its table.
    std::error_code ec;
    if (!scan_.comparisons.empty() &&
        std::filesystem::equivalent(scan_.comparisons.back().dir, results_dir_.toStdString(), ec))
        tabs_->setCurrentIndex(compare_tab);
}

MainWindow::~MainWindow() {
    // The worker only touches its own copy of the path, but its result would land in a
    // destroyed watcher.
    loader_->waitForFinished();
}

namespace {

// "12 runs · 1 ramp, 4 points on the Scalability tab · 1 comparison on the Compare tab"
QString folder_contents(const ResultsScan& scan) {
    const auto count = [](std::size_t n, const QString& one, const QString& many) {
        return QString("%1 %2").arg(n).arg(n == 1 ? one : many);
    };
    QString contents = count(scan.runs.size(), MainWindow::tr("run"), MainWindow::tr("runs"));
    if (!scan.ramps.empty()) {
        std::size_t points = 0;
        for (const Ramp& ramp : scan.ramps)
            points += ramp.point_count();
        contents += " · " +
                    count(scan.ramps.size(), MainWindow::tr("ramp"), MainWindow::tr("ramps")) +
                    ", " +
                    MainWindow::tr("%1 on the Scalability tab")
                        .arg(count(points, MainWindow::tr("point"), MainWindow::tr("points")));
    }
    if (!scan.comparisons.empty()) {
        contents += " · " + MainWindow::tr("%1 on the Compare tab")
                                .arg(count(scan.comparisons.size(), MainWindow::tr("comparison"),
                                           MainWindow::tr("comparisons")));
    }
    return contents;
}

}  // namespace

void MainWindow::reload() {
    const QString old_scenario = scenario();
    std::optional<OpenRun> before;
    if (current_run_ >= 0) {
        const Run& r = scan_.runs[static_cast<std::size_t>(current_run_)];
        before = OpenRun{.name = r.name,
                         .scenario = r.scenario(),
                         .strategy = r.strategy(),
                         .live = r.in_progress};
    }

    scan_ = scan_results(results_dir_.toStdString());
    if (watcher_->directories().isEmpty() && QDir(results_dir_).exists())
        watcher_->addPath(results_dir_);
    folder_label_->setText(
        tr("%1 — %2").arg(QDir(results_dir_).absolutePath(), folder_contents(scan_)));
    fillScenarioBox(old_scenario);
    matrix_->setRuns(scan_.runs);
    fillRunBox();
    refreshCharts();
    reopen(before);
    refreshMessages();
}

void MainWindow::fillScenarioBox(const QString& old_scenario) {
    QStringList scenarios;
    for (const Run& r : scan_.runs) {
        if (!scenarios.contains(qs(r.scenario())))
            scenarios << qs(r.scenario());
    }
    scenarios.sort();
    QSignalBlocker block(scenario_box_);
    scenario_box_->clear();
    scenario_box_->addItems(scenarios);
    if (scenarios.contains(old_scenario))
        scenario_box_->setCurrentText(old_scenario);
}

void MainWindow::fillRunBox() {
    QSignalBlocker block(run_box_);
    run_box_->clear();
    for (std::size_t i = 0; i < scan_.runs.size(); ++i) {
        const Run& r = scan_.runs[i];
        run_box_->addItem(tr("%1%2 · %3 · %4")
                              .arg(r.in_progress ? tr("● live ") : QString(), qs(r.name),
                                   qs(r.strategy()), qs(r.scenario())),
                          static_cast<int>(i));
    }
}

// Keep the open run without re-reading its history; a live run that finished continues as the
// finished folder it was renamed to.
void MainWindow::reopen(const std::optional<OpenRun>& before) {
    current_run_ = -1;
    int same = -1;
    int successor = -1;
    int with_violations = -1;
    for (std::size_t i = 0; i < scan_.runs.size(); ++i) {
        const Run& r = scan_.runs[i];
        auto idx = static_cast<int>(i);
        if (before && r.name == before->name)
            same = idx;
        // A run in progress has no workload.json yet, so its strategy may be unknown ("?").
        if (before && !r.in_progress && r.scenario() == before->scenario &&
            (before->strategy == "?" || r.strategy() == before->strategy))
            successor = idx;
        if (r.summary && !r.summary->verdict.witnesses.empty())
            with_violations = idx;
    }
    if (same >= 0) {
        current_run_ = same;
        run_box_->setCurrentIndex(same);
        if (live_model_)
            updateLiveSummary();  // the rescan dropped the live run's summary-so-far
    } else if (before && before->live && successor >= 0) {
        openRun(successor);
    } else if (!scan_.runs.empty()) {
        openRun(with_violations >= 0 ? with_violations : static_cast<int>(scan_.runs.size()) - 1);
    } else {
        showNoRun();
    }
}

void MainWindow::showNoRun() {
    live_timer_->stop();
    live_model_.reset();
    live_follower_.reset();
    history_error_.clear();
    timeline_->clearTimeline(tr("no runs in %1").arg(results_dir_));
    violations_->clear();
    story_->clear();
    run_label_->clear();
}

int MainWindow::preferredRun(const std::string& scenario) const {
    int newest = -1;
    int with_violations = -1;
    for (std::size_t i = 0; i < scan_.runs.size(); ++i) {
        const Run& r = scan_.runs[i];
        if (r.scenario() != scenario)
            continue;
        newest = static_cast<int>(i);
        if (r.summary && !r.summary->verdict.witnesses.empty())
            with_violations = newest;
    }
    return with_violations >= 0 ? with_violations : newest;
}

void MainWindow::setScenario(const QString& scenario) {
    scenario_box_->setCurrentText(scenario);
    refreshCharts();
}

QString MainWindow::scenario() const {
    return scenario_box_->currentText();
}

void MainWindow::refreshCharts() {
    const std::string sc = scenario().toStdString();
    std::map<std::string, const Run*> newest;  // runs are in start order
    for (const Run& r : scan_.runs) {
        if (r.scenario() == sc && r.summary)
            newest[r.strategy()] = &r;
    }
    std::vector<const Run*> runs;
    std::vector<const Run*> finished;  // a live run's latencies are not known until its summary
    for (const auto& [strategy, run] : newest) {
        runs.push_back(run);
        if (!run->in_progress)
            finished.push_back(run);
    }
    throughput_->setRuns(runs, tr("throughput — %1").arg(scenario()));
    latency_->setRuns(finished, scenario());
    // The newest ramp (folder names sort by time).
    scalability_->setRamp(scan_.ramps.empty() ? nullptr : &scan_.ramps.back());
    compare_->setComparison(scan_.comparisons.empty() ? nullptr : &scan_.comparisons.back());
}

void MainWindow::refreshMessages() {
    messages_.clear();
    for (const std::string& e : scan_.errors)
        messages_ << qs(e);
    if (!history_error_.isEmpty())
        messages_ << history_error_;
    QStringList shown = messages_.mid(0, kMaxMessageLines);
    if (messages_.size() > kMaxMessageLines)
        shown << tr("… and %1 more").arg(messages_.size() - kMaxMessageLines);
    message_bar_->setText(shown.join('\n'));
    message_bar_->setVisible(!messages_.isEmpty());
}

bool MainWindow::openRun(const QString& folder_name) {
    for (std::size_t i = 0; i < scan_.runs.size(); ++i) {
        if (qs(scan_.runs[i].name) == folder_name)
            return openRun(static_cast<int>(i));
    }
    history_error_ = tr("%1: no such run in %2").arg(folder_name, results_dir_);
    refreshMessages();
    return false;
}

bool MainWindow::openRun(int index) {
    if (index < 0 || static_cast<std::size_t>(index) >= scan_.runs.size())
        return false;
    live_timer_->stop();
    live_model_.reset();
    live_follower_.reset();
    history_error_.clear();
    current_run_ = index;
    run_box_->setCurrentIndex(index);
    const Run& run = scan_.runs[static_cast<std::size_t>(index)];
    if (const QString sc = qs(run.scenario()); scenario_box_->currentText() != sc) {
        {
            QSignalBlocker block(scenario_box_);
            scenario_box_->setCurrentText(sc);
        }
        refreshCharts();
    }
    loading_run_.clear();
    std::error_code ec;
    auto size = std::filesystem::file_size(run.history_path(), ec);
    if (!run.in_progress && !ec && static_cast<qint64>(size) >= async_threshold_) {
        timeline_->clearTimeline(tr("reading %1 (%2 MB) …")
                                     .arg(qs(run.history_path().string()))
                                     .arg(static_cast<double>(size) / 1e6, 0, 'f', 1));
        fillViolations();
        refreshMessages();
        loading_run_ = run.name;
        loader_->setFuture(QtConcurrent::run([path = run.history_path()]() -> Loaded {
            try {
                return {load_history(path), {}};
            } catch (const std::exception& e) {
                return {nullptr, QString::fromUtf8(e.what())};
            }
        }));
        return true;
    }
    Loaded loaded;
    if (run.in_progress) {
        try {
            live_model_ = std::make_unique<HistoryModel>();
            live_follower_ = std::make_unique<HistoryFollower>(run.history_path());
            live_follower_->poll(*live_model_, false);
            loaded.timeline = live_model_->snapshot();
            live_timer_->start();
            showLoaded(index, loaded);
            updateLiveSummary();
            return true;
        } catch (const std::exception& e) {
            loaded.error = QString::fromUtf8(e.what());
        }
    } else {
        QApplication::setOverrideCursor(Qt::WaitCursor);
        try {
            loaded.timeline = load_history(run.history_path());
        } catch (const std::exception& e) {
            loaded.error = QString::fromUtf8(e.what());
        }
        QApplication::restoreOverrideCursor();
    }
    showLoaded(index, loaded);
    return loaded.error.isEmpty();
}

void MainWindow::showLoaded(int index, const Loaded& loaded) {
    const Run& run = scan_.runs[static_cast<std::size_t>(index)];
    if (loaded.timeline) {
        std::vector<FaultWindow> faults =
            run.summary ? run.summary->faults : std::vector<FaultWindow>{};
        timeline_->setTimeline(loaded.timeline, qs(run.strategy()), faults);
    } else {
        // A broken history must leave a usable window: say which file and line, draw nothing.
        history_error_ = qs(run.name) + "/" + loaded.error;
        timeline_->clearTimeline(history_error_);
        live_timer_->stop();
    }
    fillViolations();
    showStory(run);
    // A run opens at its story: the first incident, selected in the list beside the timeline.
    if (loaded.timeline && run.summary && !run.summary->incidents.empty())
        violations_->setCurrentRow(0);
    refreshMessages();
    emit historyLoaded(index);
}

void MainWindow::showStory(const Run& run) {
    QFile file(qs((run.dir / "story.txt").string()));
    story_->setPlainText(file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll())
                                                        : QString());
    fitStory();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == story_->viewport() && event->type() == QEvent::Resize)
        fitStory();
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::fitStory() {
    constexpr qreal kSmallestReadablePt = 7;
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const qreal base = font.pointSizeF() > 0 ? font.pointSizeF() : 10;
    const QStringList lines = story_->toPlainText().split('\n');
    const QFontMetricsF metrics(font);
    qreal longest = 0;
    for (const QString& line : lines)
        longest = std::max(longest, metrics.horizontalAdvance(line));
    // The document's margins and the cursor's width on each side.
    const qreal room = story_->viewport()->width() - 2 * story_->document()->documentMargin() - 4;
    qreal size = base;
    if (longest > room && room > 0)
        size = std::max(kSmallestReadablePt, std::floor(base * room / longest * 10) / 10);
    font.setPointSizeF(size);
    const bool fits = longest * size / base <= room;
    const auto wrap = fits ? QPlainTextEdit::NoWrap : QPlainTextEdit::WidgetWidth;
    if (story_->font() != font)
        story_->setFont(font);
    if (story_->lineWrapMode() != wrap)
        story_->setLineWrapMode(wrap);
}

void MainWindow::fillViolations() {
    QSignalBlocker block(violations_);
    violations_->clear();
    run_label_->clear();
    if (current_run_ < 0)
        return;
    const Run& run = scan_.runs[static_cast<std::size_t>(current_run_)];
    const Timeline* t = timeline_->timeline();
    if (t) {
        QString text = tr("%1%2 events · %3 holds · %4 overlapping holds")
                           .arg(run.in_progress ? tr("LIVE · ") : QString())
                           .arg(t->events)
                           .arg(t->holds.size())
                           .arg(t->overlapped_holds)
                           .toHtmlEscaped();
        // The key legend, while bars are coloured by key and there are few enough to read.
        if (timeline_->colorBy() == TimelineView::ColorBy::key && t->keys.size() <= 16) {
            text += "&nbsp;&nbsp;";
            for (std::size_t k = 0; k < t->keys.size(); ++k)
                text += QString("&nbsp;<span style='color:%1'>&#9632;</span>&nbsp;%2")
                            .arg(palette_color(static_cast<int>(k)).name(),
                                 qs(t->keys[k]).toHtmlEscaped());
        }
        text += QString("&nbsp;&nbsp;<span style='color:%1'>&#9632;</span>&nbsp;%2")
                    .arg(overlap_color().name(), tr("overlap"));
        run_label_->setText(text);
    }
    auto add = [&](const QString& text, int source, std::size_t index) {
        auto* item = new QListWidgetItem(text, violations_);
        item->setToolTip(text);
        item->setData(kViolationKindRole, source);
        item->setData(kViolationIndexRole, static_cast<qulonglong>(index));
    };
    if (run.summary) {
        // The story first: each hold and everything that overlapped it.
        const auto& incidents = run.summary->incidents;
        for (std::size_t i = 0; i < incidents.size(); ++i)
            add(tr("[incident] %1").arg(qs(incidents[i].message)), from_incident, i);
        if (run.summary->incident_count > incidents.size())
            add(tr("… %1 incidents in all").arg(run.summary->incident_count), none, 0);
        // The checker's own sentences (time, key, processes, tokens), then its exact count.
        const auto& vs = run.summary->verdict.witnesses;
        for (std::size_t i = 0; i < vs.size(); ++i) {
            QString kind = qs(vs[i].kind).replace('_', ' ');
            QString what =
                vs[i].message.empty() ? tr("on %1").arg(qs(vs[i].key)) : qs(vs[i].message);
            add(QString("[%1] %2").arg(kind, what), from_checker, i);
        }
        if (run.summary->violation_count > vs.size())
            add(tr("… %1 violations in all (the checker lists %2)")
                    .arg(run.summary->violation_count)
                    .arg(vs.size()),
                none, 0);
    }
    if (t) {
        for (std::size_t i = 0; i < t->overlaps.size() && i < kMaxListedOverlaps; ++i) {
            const Overlap& o = t->overlaps[i];
            add(tr("overlap on %1: p%2 × p%3 at %4 (%5)")
                    .arg(qs(t->keys[static_cast<std::size_t>(o.key)]))
                    .arg(t->holds[o.a].process)
                    .arg(t->holds[o.b].process)
                    .arg(format_ns(o.start_ns), format_ns(o.end_ns - o.start_ns)),
                from_overlap, i);
        }
        if (t->overlap_count > std::min(t->overlaps.size(), kMaxListedOverlaps))
            add(tr("… %1 overlaps in all").arg(t->overlap_count), none, 0);
    }
    if (violations_->count() == 0)
        add(t ? tr("no violations") : tr("history not read"), none, 0);
}

void MainWindow::zoomToIncident(std::size_t index) {
    if (current_run_ < 0)
        return;
    const Run& run = scan_.runs[static_cast<std::size_t>(current_run_)];
    if (!run.summary || index >= run.summary->incidents.size() || !timeline_->timeline())
        return;
    const Incident& incident = run.summary->incidents[index];
    std::vector<std::int64_t> processes = incident.processes;
    processes.push_back(incident.process);
    const auto [t0, t1] = incident_window(incident);
    timeline_->zoomTo(t0, t1, processes);
}

void MainWindow::violationSelected(int row) {
    QListWidgetItem* item = violations_->item(row);
    const Timeline* t = timeline_->timeline();
    if (!item || current_run_ < 0 || !t)
        return;
    auto index = static_cast<std::size_t>(item->data(kViolationIndexRole).toULongLong());
    switch (item->data(kViolationKindRole).toInt()) {
        case from_overlap:
            timeline_->zoomToOverlap(index);
            break;
        case from_incident:
            zoomToIncident(index);
            break;
        case from_checker: {
            const Violation& v = scan_.runs[static_cast<std::size_t>(current_run_)]
                                     .summary->verdict.witnesses[index];
            if (auto w = witness_window(v.evidence)) {
                timeline_->zoomTo(w->first, w->second, witness_processes(v.evidence));
                break;
            }
            // A witness without times: show the first overlap the dashboard found on its key.
            for (std::size_t i = 0; i < t->overlaps.size(); ++i) {
                if (t->keys[static_cast<std::size_t>(t->overlaps[i].key)] == v.key) {
                    timeline_->zoomToOverlap(i);
                    break;
                }
            }
            break;
        }
        default:
            break;
    }
}

bool MainWindow::pollLive() {
    if (!live_follower_ || current_run_ < 0)
        return false;
    const Run& run = scan_.runs[static_cast<std::size_t>(current_run_)];
    std::error_code ec;
    if (!std::filesystem::exists(run.dir, ec)) {
        // Renamed into its final folder (or removed, if the run was aborted).
        live_timer_->stop();
        reload();
        return true;
    }
    try {
        if (live_follower_->poll(*live_model_, false) == 0)
            return false;
        timeline_->setTimeline(live_model_->snapshot(), qs(run.strategy()), {}, true);
        fillViolations();
        updateLiveSummary();
        return true;
    } catch (const std::exception& e) {
        history_error_ = qs(run.name) + "/" + QString::fromUtf8(e.what());
        live_timer_->stop();
        refreshMessages();
        return false;
    }
}

// A run in progress has no summary.json yet; its throughput so far comes from the history, so
// the Throughput tab follows it too.
void MainWindow::updateLiveSummary() {
    const Timeline* t = timeline_->timeline();
    if (current_run_ < 0 || !t)
        return;
    Run& run = scan_.runs[static_cast<std::size_t>(current_run_)];
    lockbench::RunSummary s;
    s.strategy = run.strategy() == "?" ? "live" : run.strategy();
    s.scenario = run.scenario();
    s.duration_s = static_cast<double>(t->end_ns) / 1e9;
    for (std::size_t i = 0; i < t->cycles_per_s.size(); ++i) {
        s.timeseries.push_back(
            {.t = i, .cycles = static_cast<std::uint64_t>(t->cycles_per_s[i]), .errors = 0});
    }
    run.summary = view_of(std::move(s), run.name);
    refreshCharts();
}

// A picture of the matrix is read as the whole suite: rows below a scrollbar would be missing
// from it without a sign. The window grows (for the picture only) until every row shows.
void MainWindow::growToWholeMatrix() {
    // Wide enough that every strategy's name reads in full (a suite has 19 columns); the rows'
    // heights follow from the widths, so the width comes first.
    int columns_width = 0;
    for (int c = 0; c < matrix_->columnCount(); ++c)
        columns_width += std::max(matrix_->horizontalHeader()->sectionSizeHint(c), 100);
    const int needed_width =
        matrix_->verticalHeader()->width() + columns_width + 2 * matrix_->frameWidth();
    if (needed_width > matrix_->width()) {
        resize(width() + needed_width - matrix_->width(), height());
        QApplication::processEvents();
    }
    // Rows follow their contents only once laid out at the new width: converge, never below the
    // window's own height.
    const int window_height = height();
    for (int attempt = 0; attempt < 4; ++attempt) {
        matrix_->resizeRowsToContents();
        const int needed = matrix_->verticalHeader()->length() +
                           matrix_->horizontalHeader()->height() + 2 * matrix_->frameWidth();
        const int target = std::max(window_height, height() + needed - matrix_->height());
        if (target == height())
            return;
        resize(width(), target);
        QApplication::processEvents();
    }
}

QStringList MainWindow::renderScreenshots(const QString& dir, QString* error) {
    if (!QDir().mkpath(dir)) {
        if (error)
            *error = tr("cannot create %1").arg(dir);
        return {};
    }
    // A picture of "reading …" is no picture of the run.
    if (loader_->isRunning()) {
        loader_->waitForFinished();
        QApplication::processEvents();
    }
    const int before = tabs_->currentIndex();
    const QStringList names = {"verdicts", "throughput",  "latency",
                               "timeline", "scalability", "compare"};
    QStringList written;
    const QSize window_size = size();
    for (int i = 0; i < names.size(); ++i) {
        tabs_->setCurrentIndex(i);
        // Lay the tab out (and let the timeline rebuild for its real size) before grabbing.
        QApplication::processEvents();
        if (i == verdicts_tab)
            growToWholeMatrix();
        QString path = QDir(dir).filePath(names[i] + ".png");
        const bool saved = grab().save(path);
        if (size() != window_size) {
            resize(window_size);
            QApplication::processEvents();
        }
        if (!saved) {
            if (error)
                *error = tr("cannot write %1").arg(path);
            return {};
        }
        written << path;
    }
    tabs_->setCurrentIndex(before);
    return written;
}

}  // namespace lockbench::dashboard
