// The view tests' main: widgets need a QApplication before the first one exists, so gtest_main
// will not do. `--make-results DIR` makes the real results once, as the CTest fixture.

#include <cstdio>
#include <cstring>
#include <exception>

#include <QApplication>
#include <gtest/gtest.h>

#include "dashboard/dashboard_test_results.hpp"

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--make-results") == 0) {
        try {
            lockbench::dashboard::testing::make_test_results(argv[2]);
            return 0;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 1;
        }
    }
    // CI has no display; a developer running the binary by hand should not need to know.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
