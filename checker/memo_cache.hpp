#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "checker/linearized_set.hpp"

namespace lockbench::checker::wgl {

// Lowe's memo cache: the (linearized set, state) pairs already explored. Open addressing over
// 8-byte slots (a 32-bit tag and an entry number), the set's words in one arena: no allocation per
// entry, and one cache line per probe in the common case.
template <class M>
class MemoCache {
  public:
    using State = typename M::State;

    MemoCache() : slots_(kInitialSlots) {}

    // False when the pair was already there.
    bool insert(std::uint64_t hash, const LinearizedSet& set, const State& state) {
        const auto window = set.window();
        const std::uint32_t tag = static_cast<std::uint32_t>(hash >> 32);
        std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            Slot& slot = slots_[i];
            if (slot.entry == 0) {
                break;
            }
            if (slot.tag == tag) {
                const Entry& entry = entries_[slot.entry - 1];
                if (entry.hash == hash && entry.window == window && entry.state == state &&
                    set.window_equals(window, arena_.data() + entry.words_at)) {
                    return false;
                }
            }
        }
        entries_.push_back({hash, arena_.size(), window, state});
        set.copy_window(window, arena_);
        heap_bytes_ += M::heap_bytes(state);
        if (entries_.size() * 2 > slots_.size()) {
            grow();
        }
        place(hash, static_cast<std::uint32_t>(entries_.size()));
        return true;
    }

    std::size_t memory_bytes() const {
        return slots_.capacity() * sizeof(Slot) + entries_.capacity() * sizeof(Entry) +
               arena_.capacity() * sizeof(std::uint64_t) + heap_bytes_;
    }

  private:
    static constexpr std::size_t kInitialSlots = 1024;
    struct Slot {
        std::uint32_t tag = 0;
        std::uint32_t entry = 0;  // 1-based; 0: empty
    };
    struct Entry {
        std::uint64_t hash;
        std::size_t words_at;
        LinearizedSet::Window window;
        State state;
    };

    void place(std::uint64_t hash, std::uint32_t entry) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = hash & mask;
        while (slots_[i].entry != 0) {
            i = (i + 1) & mask;
        }
        slots_[i] = {static_cast<std::uint32_t>(hash >> 32), entry};
    }

    void grow() {
        slots_.assign(slots_.size() * 2, Slot{});
        for (std::size_t e = 0; e < entries_.size(); ++e) {
            place(entries_[e].hash, static_cast<std::uint32_t>(e + 1));
        }
    }

    std::vector<Slot> slots_;
    std::vector<Entry> entries_;
    std::vector<std::uint64_t> arena_;
    std::size_t heap_bytes_ = 0;
};

}  // namespace lockbench::checker::wgl
