#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "checker/models.hpp"  // mix_hash

namespace lockbench::checker::wgl {

// The set of linearized ops. Ops that must be linearized (ok, observations) take the low bits in
// call order and info ops the high bits, so in practice the set is "all ops up to a frontier, a
// few beyond it, some infos": the memo cache stores only the words from the first non-full word to
// the last non-zero one of each region, which is what keeps an entry a few words long on
// histories of thousands of ops. The hash is Zobrist's (a random key per bit, xor-ed), so
// flipping a bit updates it in O(1) instead of rehashing the whole set on every step.
class LinearizedSet {
  public:
    LinearizedSet(std::size_t required_ops, std::size_t info_ops, std::uint64_t seed)
        : required_words_((required_ops + 63) / 64),
          words_(required_words_ + (info_ops + 63) / 64, 0),
          keys_(required_words_ * 64 + info_ops) {
        for (auto& key : keys_) {
            seed += 0x9e3779b97f4a7c15ULL;
            key = mix_hash(seed);
        }
    }

    // Bit positions: required op i at i, info op j at required_words * 64 + j.
    std::size_t info_base() const { return required_words_ * 64; }

    void set(std::size_t bit) {
        const std::size_t w = bit / 64;
        words_[w] |= std::uint64_t{1} << (bit % 64);
        hash_ ^= keys_[bit];
        if (w < required_words_) {
            while (full_prefix_ < required_words_ && words_[full_prefix_] == ~std::uint64_t{0}) {
                ++full_prefix_;
            }
            required_end_ = std::max(required_end_, w + 1);
        }
    }

    bool test(std::size_t bit) const { return (words_[bit / 64] >> (bit % 64)) & 1U; }

    void clear(std::size_t bit) {
        const std::size_t w = bit / 64;
        words_[w] &= ~(std::uint64_t{1} << (bit % 64));
        hash_ ^= keys_[bit];
        if (w < required_words_) {
            full_prefix_ = std::min(full_prefix_, w);
            while (required_end_ > 0 && words_[required_end_ - 1] == 0) {
                --required_end_;
            }
        }
    }

    std::uint64_t hash() const { return hash_; }

    // The canonical window of the set: equal sets have equal windows and words.
    struct Window {
        std::uint32_t required_begin, required_end, info_begin, info_end;
        friend bool operator==(const Window&, const Window&) = default;
        std::size_t size() const {
            return (required_end - required_begin) + (info_end - info_begin);
        }
    };
    Window window() const {
        std::size_t info_begin = required_words_;
        std::size_t info_end = words_.size();
        while (info_begin < info_end && words_[info_begin] == 0) {
            ++info_begin;
        }
        while (info_end > info_begin && words_[info_end - 1] == 0) {
            --info_end;
        }
        const std::size_t required_begin = std::min(full_prefix_, required_end_);
        return {static_cast<std::uint32_t>(required_begin),
                static_cast<std::uint32_t>(std::max(required_begin, required_end_)),
                static_cast<std::uint32_t>(info_begin), static_cast<std::uint32_t>(info_end)};
    }
    void copy_window(const Window& window, std::vector<std::uint64_t>& out) const {
        out.insert(out.end(), words_.begin() + window.required_begin,
                   words_.begin() + window.required_end);
        out.insert(out.end(), words_.begin() + window.info_begin, words_.begin() + window.info_end);
    }
    bool window_equals(const Window& window, const std::uint64_t* stored) const {
        return std::equal(words_.begin() + window.required_begin,
                          words_.begin() + window.required_end, stored) &&
               std::equal(words_.begin() + window.info_begin, words_.begin() + window.info_end,
                          stored + (window.required_end - window.required_begin));
    }

  private:
    std::size_t required_words_;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint64_t> keys_;
    std::uint64_t hash_ = 0;
    std::size_t full_prefix_ = 0;   // words [0, full_prefix_) are all ones
    std::size_t required_end_ = 0;  // required words [required_end_, …) are zero
};

}  // namespace lockbench::checker::wgl
