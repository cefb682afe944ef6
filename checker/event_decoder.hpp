#pragma once

// Turns one line of history.jsonl into an Event (checker/HISTORY.md says what each field means).
// Two paths give the same result: a straight-line match of the layout the engine writes, and a
// general decoder for any valid JSON object, which also words every error. The reader (history.hpp)
// adds what needs more than one line: the index sequence and each process's operation in flight.

#include <cstdint>
#include <string>
#include <string_view>

#include "checker/history.hpp"

namespace lockbench::checker {

class EventDecoder {
  public:
    // Decodes [line_begin, line_end); *line_end must be a readable NUL. `line` (1-based) goes
    // into the event and into every error. Throws HistoryError.
    void decode(const char* line_begin, const char* line_end, std::uint64_t line, Event& e);

    // Whether the last decoded event stated value.mode (a grant that does not has the mode its
    // acquire asked for).
    bool mode_given() const { return mode_given_; }

    // The two paths, public for the test that holds them to one contract. decode_canonical
    // returns false (or throws) for any line not in the engine's layout.
    bool decode_canonical(const char* line_begin, const char* line_end, std::uint64_t line,
                          Event& e);
    void decode_general(const char* line_begin, const char* line_end, std::uint64_t line, Event& e);

  private:
    void start(std::uint64_t line, Event& e);
    void decode_value(Event& e, std::string_view raw);

    std::uint64_t line_ = 0;
    std::string name_scratch_;  // reused so that steady-state decoding allocates nothing
    bool mode_given_ = false;
};

}  // namespace lockbench::checker
