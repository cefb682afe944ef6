// What recording a lock cycle's four history events costs the engine, from one and from two
// client threads at once (the shared-connection runs' shape: docs/performance.md). Written to
// /dev/null, so the time is the recorder's own - stamping, formatting and putting the threads'
// lines back in index order - not the file's; BENCH_HISTORY=path writes to a real file instead.
// `cpu_ns/event` counts every thread of the process, the writer's too; Time is a lock cycle's
// (four events) on the recording threads' wall clock.

#include <cstdlib>
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "engine/clients/history_recorder.hpp"
#include "strategies/client/clock.hpp"

namespace {

using lockbench::EventType;
using lockbench::HistoryEventView;
using lockbench::HistoryRecorder;

double process_cpu_ns() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto ns = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) * 1e9 + static_cast<double>(tv.tv_usec) * 1e3;
    };
    return ns(usage.ru_utime) + ns(usage.ru_stime);
}

HistoryRecorder* shared_recorder = nullptr;
double cpu_at_start = 0;

void RecordLockCycles(benchmark::State& state) {
    if (state.thread_index() == 0) {
        shared_recorder = new HistoryRecorder(
            std::getenv("BENCH_HISTORY") ? std::getenv("BENCH_HISTORY") : "/dev/null",
            lockbench::EventLoop::now());
        cpu_at_start = process_cpu_ns();
    }
    lockbench::Clock clock;  // each client thread reads its own
    const std::int64_t process = state.thread_index();
    const std::string key = "k4711";
    const std::string token = R"({"token":"c7-03bedd:1"})";
    const std::string grant = R"({"token":"c7-03bedd:1","mode":"exclusive","lease_ms":30000})";
    for (auto _ : state) {
        auto& recorder = *shared_recorder;
        const auto event = [&](EventType type, std::string_view f, std::string_view value) {
            recorder.record(HistoryEventView{.type = type,
                                             .process = process,
                                             .f = f,
                                             .key = key,
                                             .value = value,
                                             .clock = &clock});
        };
        event(EventType::Invoke, "acquire", R"({"mode":"exclusive","lease_ms":30000})");
        event(EventType::Ok, "acquire", grant);
        event(EventType::Invoke, "release", token);
        event(EventType::Ok, "release", "null");
    }
    if (state.thread_index() == 0) {
        // Every thread's loop has ended here (Google Benchmark joins them at the loop's end).
        shared_recorder->finish();
        const double events = static_cast<double>(shared_recorder->events());
        state.counters["cpu_ns/event"] = (process_cpu_ns() - cpu_at_start) / events;
        delete shared_recorder;
        shared_recorder = nullptr;
    }
    state.SetItemsProcessed(state.iterations() * 4);
}
BENCHMARK(RecordLockCycles)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
