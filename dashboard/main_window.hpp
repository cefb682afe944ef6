#pragma once

// The dashboard window: a results folder's verdict matrix, throughput and latency of one scenario,
// and the timeline of one run, with every problem found in the files shown in a message bar
// instead of crashing. Watches the folder, so new runs appear and a run in progress (a `.tmp-…`
// folder) is followed as its history grows.

#include <memory>
#include <optional>
#include <string>

#include <QFutureWatcher>
#include <QMainWindow>
#include <QStringList>

#include "dashboard/history_model.hpp"
#include "dashboard/results_model.hpp"

class QComboBox;
class QFileSystemWatcher;
class QHBoxLayout;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QTabWidget;
class QTimer;

namespace lockbench::dashboard {

class CompareView;
class LatencyView;
class ScalabilityView;
class ThroughputView;
class TimelineView;
class VerdictMatrixView;

class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    enum Tab {
        verdicts_tab,
        throughput_tab,
        latency_tab,
        timeline_tab,
        scalability_tab,
        compare_tab
    };

    explicit MainWindow(const QString& results_dir, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Rescans the folder; keeps the selected scenario and run where they still exist.
    void reload();
    // Opens run `index` (into scan().runs) in the timeline; false if its history is unreadable
    // (the message bar says why). A history of asyncThreshold() bytes or more is read on a worker
    // thread, so the window stays responsive; historyLoaded() says when it is drawn.
    bool openRun(int index);
    bool openRun(const QString& folder_name);
    int currentRun() const { return current_run_; }
    void setScenario(const QString& scenario);
    QString scenario() const;

    void setAsyncThreshold(qint64 bytes) { async_threshold_ = bytes; }
    qint64 asyncThreshold() const { return async_threshold_; }
    // True from openRun() of a big history until its result has been shown on the GUI thread;
    // the worker itself may finish long before the GUI thread gets to it.
    bool loading() const { return !loading_run_.empty(); }

    // One step of live mode: feeds what the open in-progress run's history gained since the last
    // step. Returns true if the timeline changed. Runs on a timer; public for tests.
    bool pollLive();

    // Renders every view to DIR/<view>.png; returns the files written, or empty with `error` set.
    // verdicts.png is as tall as the whole matrix (the window grows for it, then shrinks back).
    QStringList renderScreenshots(const QString& dir, QString* error);

    const ResultsScan& scan() const { return scan_; }
    // Everything the message bar shows, one problem per entry.
    QStringList messages() const { return messages_; }
    QLabel* messageBar() const { return message_bar_; }
    // "<folder> — 3 runs · 1 ramp, 8 points on the Scalability tab"
    QLabel* folderLabel() const { return folder_label_; }
    QTabWidget* tabs() const { return tabs_; }
    VerdictMatrixView* verdictMatrix() const { return matrix_; }
    ThroughputView* throughputView() const { return throughput_; }
    LatencyView* latencyView() const { return latency_; }
    ScalabilityView* scalabilityView() const { return scalability_; }
    CompareView* compareView() const { return compare_; }
    TimelineView* timelineView() const { return timeline_; }
    QListWidget* violationList() const { return violations_; }
    // The open run's story.txt (lockbench's narrative of its first violation), beside the list.
    QPlainTextEdit* storyPanel() const { return story_; }

  signals:
    void historyLoaded(int run_index);

  private:
    // The constructor's steps, in the order it takes them.
    void watchHistoryLoader();
    void setUpMessageBar();
    QHBoxLayout* makeFolderRow();
    void addTabs();
    QWidget* makeTimelinePage();
    QHBoxLayout* makeRunRow();
    void setUpViolationList();
    void setUpStoryPanel();
    void connectViews();
    void watchResultsFolder();
    // A folder holding only ramps, or a comparison's own folder, opens on the tab that shows it.
    void openOnWhatTheFolderHolds();

    struct Loaded {
        std::shared_ptr<const Timeline> timeline;
        QString error;
    };
    void showLoaded(int run_index, const Loaded& loaded);
    // The run open before a rescan, to open it (or what it became) again after.
    struct OpenRun {
        std::string name;
        std::string scenario;
        std::string strategy;
        bool live = false;
    };
    void fillScenarioBox(const QString& old_scenario);
    void fillRunBox();
    void reopen(const std::optional<OpenRun>& before);
    void showNoRun();
    void updateLiveSummary();
    void refreshCharts();
    // The run the timeline shows for a scenario: its newest with violations, else its newest.
    int preferredRun(const std::string& scenario) const;
    void refreshMessages();
    void fillViolations();
    void showStory(const Run& run);
    void fitStory();
    void growToWholeMatrix();
    bool eventFilter(QObject* watched, QEvent* event) override;
    void violationSelected(int row);
    void zoomToIncident(std::size_t index);
    void finishLiveRun();

    QString results_dir_;
    ResultsScan scan_;
    QStringList messages_;
    QString history_error_;
    int current_run_ = -1;
    // ~8 MB is ~60 k events: read in well under a second, not worth a thread (or a flicker).
    qint64 async_threshold_ = 8 << 20;
    QFutureWatcher<Loaded>* loader_;
    std::string loading_run_;  // folder name of the run being read on the worker
    // Live mode: the reader of the open `.tmp-…` run's history.
    std::unique_ptr<HistoryModel> live_model_;
    std::unique_ptr<HistoryFollower> live_follower_;

    QLabel* message_bar_;
    QLabel* folder_label_;
    QComboBox* scenario_box_;
    QTabWidget* tabs_;
    VerdictMatrixView* matrix_;
    ThroughputView* throughput_;
    LatencyView* latency_;
    ScalabilityView* scalability_;
    CompareView* compare_;
    TimelineView* timeline_;
    QComboBox* run_box_;
    QComboBox* color_box_;
    QLabel* run_label_;
    QListWidget* violations_;
    QPlainTextEdit* story_;
    QFileSystemWatcher* watcher_;
    QTimer* rescan_timer_;
    QTimer* live_timer_;
};

}  // namespace lockbench::dashboard
