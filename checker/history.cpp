#include "checker/history.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "checker/event_decoder.hpp"
#include "checker/json_cursor.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

namespace {

// Checks 1-4 must keep up with millions of events per second, so the reader hands the decoder
// lines in place, in large chunks, and the decoder builds no DOM.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

}  // namespace

struct HistoryParser::Sequence {
    EventDecoder decoder;
    std::uint64_t line = 0;
    std::uint64_t next_index = 0;
    std::uint64_t pending_blank_line = 0;  // a blank line is fine only if nothing follows it

    // The op each process has in flight. Process ids are small and dense in practice, so a
    // vector indexed by id; ids beyond it (converted histories) go to a map.
    struct InFlight {
        bool open = false;
        LockMode mode = LockMode::Exclusive;
        std::uint32_t f = 0;  // into op_names
        std::uint64_t line = 0;
    };
    static constexpr std::int64_t kDenseProcesses = std::int64_t{1} << 20;
    std::vector<InFlight> dense;
    std::unordered_map<std::int64_t, InFlight> sparse;
    std::vector<std::string> op_names;

    InFlight& in_flight(std::int64_t process) {
        if (process < kDenseProcesses) {
            const auto i = static_cast<std::size_t>(process);
            if (i >= dense.size())
                dense.resize(std::max(i + 1, dense.size() * 2));
            return dense[i];
        }
        return sparse[process];
    }

    std::uint32_t intern_op(const std::string& f) {
        for (std::size_t i = 0; i < op_names.size(); ++i) {
            if (op_names[i] == f)
                return static_cast<std::uint32_t>(i);
        }
        op_names.push_back(f);
        return static_cast<std::uint32_t>(op_names.size() - 1);
    }

    void track(Event& e);
};

void HistoryParser::Sequence::track(Event& e) {
    if (e.index != next_index) {
        throw HistoryError(line, "`index` is " + std::to_string(e.index) + ", expected " +
                                     std::to_string(next_index));
    }
    ++next_index;
    if (e.is_nemesis())
        return;  // a nemesis may run several faults at once; nothing pairs its events
    InFlight& slot = in_flight(e.process);
    if (e.type == EventType::Invoke) {
        if (slot.open) {
            throw HistoryError(line, "process " + std::to_string(e.process) + " invokes `" + e.f +
                                         "` while its `" + op_names[slot.f] + "` from line " +
                                         std::to_string(slot.line) + " is still in flight");
        }
        slot.open = true;
        slot.f = intern_op(e.f);
        slot.line = line;
        slot.mode = e.mode;
        return;
    }
    if (!slot.open) {
        throw HistoryError(line, "process " + std::to_string(e.process) + " completes `" + e.f +
                                     "` but has no operation in flight");
    }
    if (op_names[slot.f] != e.f) {
        throw HistoryError(line, "process " + std::to_string(e.process) + " completes `" + e.f +
                                     "` but its operation in flight is `" + op_names[slot.f] +
                                     "` from line " + std::to_string(slot.line));
    }
    // A grant that does not restate its mode has the mode that was asked for.
    if (e.type == EventType::Ok && !decoder.mode_given() && equals(e.f, "acquire"))
        e.mode = slot.mode;
    slot.open = false;
    if (e.process >= kDenseProcesses)
        sparse.erase(e.process);  // memory stays bounded by the operations in flight
}

HistoryParser::HistoryParser() : sequence_(std::make_unique<Sequence>()) {}
HistoryParser::~HistoryParser() = default;

std::uint64_t HistoryParser::lines() const {
    return sequence_->line;
}

bool HistoryParser::parse(char* begin, char* end, Event& event) {
    Sequence& s = *sequence_;
    ++s.line;
    *end = '\0';  // the sentinel the decoder's cursor relies on
    const char* p = begin;
    while (p < end && json_cursor::is_json_space(*p))
        ++p;
    if (p == end) {
        if (s.pending_blank_line == 0)
            s.pending_blank_line = s.line;
        return false;
    }
    if (s.pending_blank_line != 0)
        throw HistoryError(s.pending_blank_line, "blank line inside the history");
    s.decoder.decode(begin, end, s.line, event);
    s.track(event);
    return true;
}

struct HistoryReader::Impl {
    // Where bytes come from: an owned FILE* (path) or a borrowed istream.
    std::FILE* file = nullptr;
    std::istream* stream = nullptr;
    std::string path;

    std::vector<char> buffer = std::vector<char>(kChunkBytes);
    std::size_t begin = 0;  // first unparsed byte
    std::size_t end = 0;    // one past the last byte read
    bool eof = false;

    HistoryParser parser;

    ~Impl() {
        if (file)
            std::fclose(file);
    }

    std::size_t read_some(char* into, std::size_t capacity) {
        if (file) {
            const std::size_t n = std::fread(into, 1, capacity, file);
            if (n < capacity && std::ferror(file))
                throw std::system_error(errno, std::generic_category(), "cannot read " + path);
            return n;
        }
        stream->read(into, static_cast<std::streamsize>(capacity));
        if (stream->bad())
            throw std::runtime_error("cannot read the history: stream error");
        return static_cast<std::size_t>(stream->gcount());
    }

    // Points [line_begin, line_end) at the next complete line (without its newline), or at the
    // last bytes of the input; *line_end is writable. Returns false when no bytes remain.
    bool fill(char*& line_begin, char*& line_end) {
        for (;;) {
            if (begin < end) {
                const void* nl = std::memchr(buffer.data() + begin, '\n', end - begin);
                if (nl) {
                    char* newline = buffer.data() + (static_cast<const char*>(nl) - buffer.data());
                    line_begin = buffer.data() + begin;
                    line_end = newline;
                    begin = static_cast<std::size_t>(newline - buffer.data()) + 1;
                    return true;
                }
            }
            if (eof) {
                if (begin == end)
                    return false;
                line_begin = buffer.data() + begin;
                line_end = buffer.data() + end;  // read_some always leaves this byte free
                begin = end;
                return true;
            }
            // Keep the partial line, then read more behind it.
            if (begin > 0) {
                std::memmove(buffer.data(), buffer.data() + begin, end - begin);
                end -= begin;
                begin = 0;
            }
            if (end + 1 >= buffer.size())
                buffer.resize(buffer.size() * 2);  // one line longer than a chunk
            const std::size_t n = read_some(buffer.data() + end, buffer.size() - end - 1);
            if (n == 0)
                eof = true;
            end += n;
        }
    }
};

HistoryReader::HistoryReader(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path.string();
    impl_->file = std::fopen(impl_->path.c_str(), "rb");
    if (!impl_->file)
        throw std::system_error(errno, std::generic_category(), "cannot open " + impl_->path);
}

HistoryReader::HistoryReader(std::istream& in) : impl_(std::make_unique<Impl>()) {
    impl_->stream = &in;
}

HistoryReader::~HistoryReader() = default;

bool HistoryReader::next(Event& event) {
    char* line_begin = nullptr;
    char* line_end = nullptr;
    do {
        if (!impl_->fill(line_begin, line_end))
            return false;  // trailing blank lines are only a trailing newline too many
    } while (!impl_->parser.parse(line_begin, line_end, event));
    return true;
}

}  // namespace lockbench::checker
