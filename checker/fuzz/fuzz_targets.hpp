#pragma once

// What `lockbench check` does with a file a user hands it, one function per format, shared by the
// libFuzzer programs (clang, LOCKBENCH_BUILD_FUZZERS) and by the regression test that replays
// every input they found in every build. The contract: an input is either judged or rejected as
// bad input - the errors the command line reports with exit 2 - and nothing else; any other
// exception escapes, and a crash, a sanitizer report or a hang is a bug too.

#include <string_view>

namespace lockbench::checker::fuzz {

// A history.jsonl: read, decoded, every check that applies run, the report written as text and
// as JSON (`--json`), and its story told (`--story`). True when judged, false when rejected.
bool check_jsonl_history(std::string_view text);

// A Jepsen history.edn: converted to history.jsonl, then as above.
bool check_edn_history(std::string_view text);

}  // namespace lockbench::checker::fuzz
