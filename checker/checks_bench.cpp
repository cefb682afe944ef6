// Checks 1-4 over generated histories of 1 M and 10 M events (target: >= 5 M events/s on one
// core). The JSONL text is generated once per size, outside the timed region, and read through a
// streambuf over it, so the timing is the checker's alone: parsing plus the four checks.

#include <map>
#include <sstream>
#include <streambuf>
#include <string>

#include <benchmark/benchmark.h>

#include "checker/check.hpp"
#include "checker/history.hpp"
#include "checker/history_generator.hpp"

namespace {

using lockbench::checker::CheckOptions;
using lockbench::checker::Event;
using lockbench::checker::HistoryReader;

// Reads a string in place: std::istringstream would copy 1.3 GB of text.
class StringViewBuf : public std::streambuf {
  public:
    explicit StringViewBuf(const std::string& text) {
        char* begin = const_cast<char*>(text.data());
        setg(begin, begin, begin + text.size());
    }
};

const std::string& history_text(std::uint64_t events) {
    static std::map<std::uint64_t, std::string> cache;
    auto it = cache.find(events);
    if (it == cache.end()) {
        lockbench::checker::testing::HistoryGenerator generator(
            {.seed = 2024, .processes = 256, .keys = 16});
        it = cache.emplace(events, generator.generate(events)).first;
    }
    return it->second;
}

void BM_CheckHistory(benchmark::State& state) {
    const auto events = static_cast<std::uint64_t>(state.range(0));
    const std::string& text = history_text(events);
    CheckOptions options;  // model None: checks 1-4
    for (auto _ : state) {
        StringViewBuf buf(text);
        std::istream in(&buf);
        auto report = lockbench::checker::check_history(in, options);
        if (report.events != events || report.verdict != lockbench::checker::Verdict::Valid)
            state.SkipWithError("the generated history should be valid");
        benchmark::DoNotOptimize(report);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_CheckHistory)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

// The parser alone, to see what the checks add.
void BM_ParseHistory(benchmark::State& state) {
    const auto events = static_cast<std::uint64_t>(state.range(0));
    const std::string& text = history_text(events);
    for (auto _ : state) {
        StringViewBuf buf(text);
        std::istream in(&buf);
        HistoryReader reader(in);
        Event event;
        std::uint64_t n = 0;
        while (reader.next(event))
            ++n;
        benchmark::DoNotOptimize(n);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseHistory)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
