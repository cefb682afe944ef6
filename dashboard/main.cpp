// lockbench-dashboard [RESULTS_DIR | RUN_DIR] [--run NAME] [--screenshot DIR]
// A RUN_DIR (a folder holding history.jsonl) opens its parent results folder at that run.

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include "dashboard/main_window.hpp"

namespace {

bool wants_no_window(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        for (const char* flag : {"-h", "--help", "--help-all", "-v", "--version", "--screenshot"}) {
            const std::size_t n = std::strlen(flag);
            if (std::strncmp(argv[i], flag, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
                return true;
        }
    }
    return false;
}

bool is_set(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

}  // namespace

int main(int argc, char** argv) {
    // --help and --screenshot need no display: without one, Qt would abort before printing a word.
    if (!is_set("QT_QPA_PLATFORM")) {
        if (wants_no_window(argc, argv)) {
            setenv("QT_QPA_PLATFORM", "offscreen", 1);
        } else if (!is_set("DISPLAY") && !is_set("WAYLAND_DISPLAY")) {
            std::fprintf(stderr,
                         "lockbench-dashboard: no display (DISPLAY and WAYLAND_DISPLAY are unset); "
                         "--screenshot DIR renders the views without one\n");
            return 2;
        }
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName("lockbench-dashboard");
    QCommandLineParser cli;
    cli.setApplicationDescription(
        "Throughput, latency, verdicts and the lock-hold timeline of lockbench results.");
    cli.addHelpOption();
    cli.addPositionalArgument("results", "Results folder (default: results) or one run's folder.",
                              "[RESULTS_DIR]");
    QCommandLineOption screenshot("screenshot",
                                  "Render every view to DIR/<view>.png and exit; needs no "
                                  "display.",
                                  "DIR");
    QCommandLineOption run("run", "Open this run (folder name) in the timeline.", "NAME");
    cli.addOption(screenshot);
    cli.addOption(run);
    cli.process(app);

    QString dir = cli.positionalArguments().value(0, "results");
    QString run_name = cli.value(run);
    if (QFileInfo::exists(QDir(dir).filePath("history.jsonl"))) {
        QDir d(dir);
        run_name = d.dirName();
        d.cdUp();
        dir = d.path();
    }

    lockbench::dashboard::MainWindow window(dir);
    if (!run_name.isEmpty() && !window.openRun(run_name) && cli.isSet(screenshot)) {
        // A script asked for pictures of this run: pictures of another would pass for them.
        std::fprintf(stderr, "lockbench-dashboard: --run %s: no such run in %s\n",
                     qPrintable(run_name), qPrintable(dir));
        return 2;
    }
    window.resize(1280, 800);
    window.show();
    if (!cli.isSet(screenshot))
        return QApplication::exec();

    for (const QString& m : window.messages())
        std::fprintf(stderr, "lockbench-dashboard: %s\n", qPrintable(m));
    QString error;
    const QStringList files = window.renderScreenshots(cli.value(screenshot), &error);
    if (files.isEmpty()) {
        std::fprintf(stderr, "lockbench-dashboard: %s\n", qPrintable(error));
        return 4;
    }
    for (const QString& f : files)
        std::printf("%s\n", qPrintable(f));
    return 0;
}
