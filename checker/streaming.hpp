#pragma once

// What the streaming checks (mutual exclusion, fencing, resource, liveness) share: the operation
// an event belongs to, crash events, and who holds which key counting re-entrant nesting. Each
// check keeps its own copy of this state so that every check stays a pure function of the history.
// Mutual exclusion, fencing and resource are also one interface, StreamingCheck, which keeps
// their violations.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/report.hpp"

namespace lockbench::checker {

enum class Op : std::uint8_t { Acquire, Release, Renew, Read, Write, Cas, Crash, Other };

// Fixed-length comparisons compile to a few loads instead of a strlen and a memcmp call; the
// streaming checks classify every event, millions per second.
template <std::size_t N>
bool equals(std::string_view s, const char (&literal)[N]) {
    return s.size() == N - 1 && std::memcmp(s.data(), literal, N - 1) == 0;
}

// Crash is the nemesis event {"f":"crash","value":{"target":P}}: P never runs again, its op in
// flight stays in flight and the locks it held are orphaned.
inline Op op_of(const Event& e) {
    const std::string_view f = e.f;
    if (e.is_nemesis())
        return equals(f, "crash") && e.target ? Op::Crash : Op::Other;
    switch (f.size()) {
        case 3:
            return equals(f, "cas") ? Op::Cas : Op::Other;
        case 4:
            return equals(f, "read") ? Op::Read : Op::Other;
        case 5:
            if (equals(f, "write"))
                return Op::Write;
            return equals(f, "renew") ? Op::Renew : Op::Other;
        case 7:
            if (equals(f, "acquire"))
                return Op::Acquire;
            return equals(f, "release") ? Op::Release : Op::Other;
        default:
            return Op::Other;
    }
}

// "1.204 s": how messages show engine times.
inline std::string format_seconds(std::int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
    return buf;
}

// "orders: " before a sentence about a key; nothing for a history without keys (HISTORY.md lets
// `key` be omitted), where ": process 0 held it" would read as a glitch.
inline std::string key_prefix(const std::string& key) {
    return key.empty() ? std::string() : key + ": ";
}

// "orders", or "the lock" in a history without keys.
inline std::string lock_name(const std::string& key) {
    return key.empty() ? std::string("the lock") : key;
}

// " (token c5-12, lease 500 ms)" from the parts that are there; nothing when none is.
inline std::string parenthesised(const std::vector<std::string>& parts) {
    std::string joined;
    for (const auto& part : parts) {
        if (!part.empty())
            joined += (joined.empty() ? "" : ", ") + part;
    }
    return joined.empty() ? joined : " (" + joined + ")";
}

// "process 5 (token c5-12)": how messages name a holder.
inline std::string who(std::int64_t process, const std::string& token) {
    std::string s = "process " + std::to_string(process);
    if (!token.empty())
        s += " (token " + token + ")";
    return s;
}

inline double ns_to_ms(std::int64_t ns) {
    return static_cast<double>(ns) / 1e6;
}

// The result of a check that has nothing to judge in this history: it says so and why, and
// takes no part in the verdict (a check cannot pass on a history it does not fit).
inline nlohmann::json not_applicable(const std::string& why) {
    return nlohmann::json{
        {"valid", to_json(Verdict::NotApplicable)}, {"violations", 0}, {"reason", why}};
}

// Who holds which key. Re-entrant strategies grant a key its holder already holds: that is the
// same hold one level deeper, and the hold ends at the release that brings the depth back to 0.
// A release names its grant by token, so it ends the hold of the process that was granted that
// token even when another process id sends it (after an `info` the cleanup runs under a new id,
// HISTORY.md). Memory is proportional to the open holds.
class HoldNesting {
  public:
    // The depth after this grant: 1 starts a hold, more is a nested grant of a held key.
    int grant(std::int64_t process, const std::string& key, const std::string& token = {}) {
        auto it = by_process_.find(process);
        if (it == by_process_.end()) {
            if (spare_.empty()) {
                it = by_process_.try_emplace(process).first;
            } else {
                auto node = std::move(spare_.back());
                spare_.pop_back();
                node.key() = process;
                it = by_process_.insert(std::move(node)).position;
            }
        }
        auto& held = it->second;
        for (auto& entry : held) {
            if (entry.key == key) {
                if (!token.empty() && token != entry.token)
                    entry.nested_tokens.push_back(token);
                return ++entry.depth;
            }
        }
        held.push_back(Entry{key, 1, token, {}});
        return 1;
    }

    enum class Release : std::uint8_t { NotHeld, Nested, Ended };
    struct Released {
        Release kind = Release::NotHeld;
        std::int64_t owner = 0;  // the process whose hold it was
    };

    // A release invoke ends one level whatever its outcome: the client stops relying on the lock
    // once it asks to give it back.
    Released release(std::int64_t process, const std::string& key, const std::string& token = {}) {
        auto it = by_process_.find(process);
        if (it == by_process_.end() || !has_key(it->second, key)) {
            // Not this process's: the grant its token names, if another process id holds it
            // (rare - only after an `info` - so a scan is fine).
            if (token.empty())
                return {Release::NotHeld, process};
            it = owner_of(key, token);
            if (it == by_process_.end())
                return {Release::NotHeld, process};
        }
        const std::int64_t owner = it->first;
        auto& held = it->second;
        for (auto entry = held.begin(); entry != held.end(); ++entry) {
            if (entry->key != key)
                continue;
            if (--entry->depth > 0)
                return {Release::Nested, owner};
            held.erase(entry);
            if (held.empty())
                retire(it);
            return {Release::Ended, owner};
        }
        return {Release::NotHeld, owner};
    }

    bool holds(std::int64_t process, const std::string& key) const {
        auto it = by_process_.find(process);
        return it != by_process_.end() && has_key(it->second, key);
    }

    // A crash: every key `process` held, in the order it got them; the process holds nothing now.
    std::vector<std::string> drop(std::int64_t process) {
        std::vector<std::string> keys;
        auto it = by_process_.find(process);
        if (it == by_process_.end())
            return keys;
        for (auto& entry : it->second)
            keys.push_back(std::move(entry.key));
        it->second.clear();
        retire(it);
        return keys;
    }

  private:
    struct Entry {
        std::string key;
        int depth = 0;
        std::string token;                       // the first grant's
        std::vector<std::string> nested_tokens;  // re-entrant grants with tokens of their own
    };
    using Map = std::unordered_map<std::int64_t, std::vector<Entry>>;

    static bool has_key(const std::vector<Entry>& held, const std::string& key) {
        return std::any_of(held.begin(), held.end(),
                           [&](const Entry& entry) { return entry.key == key; });
    }

    Map::iterator owner_of(const std::string& key, const std::string& token) {
        for (auto it = by_process_.begin(); it != by_process_.end(); ++it) {
            for (const Entry& entry : it->second) {
                if (entry.key == key &&
                    (entry.token == token ||
                     std::find(entry.nested_tokens.begin(), entry.nested_tokens.end(), token) !=
                         entry.nested_tokens.end()))
                    return it;
            }
        }
        return by_process_.end();
    }

    // Every hold would otherwise allocate a map node and a vector and free them at its end; a
    // few spare nodes (with their vectors' capacity) make the steady state allocation-free.
    void retire(Map::iterator it) {
        if (spare_.size() < kSpareNodes)
            spare_.push_back(by_process_.extract(it));
        else
            by_process_.erase(it);
    }
    static constexpr std::size_t kSpareNodes = 64;

    Map by_process_;
    std::vector<Map::node_type> spare_;
};

// What a check remembers per process while an operation is in flight (a release, a write, an
// acquire): set at the invoke, taken at the completion - millions of times per history. The
// map's nodes are recycled, with the strings inside them, so the steady state allocates
// nothing.
template <class V>
class PerProcess {
  public:
    using Map = std::unordered_map<std::int64_t, V>;

    // The slot for `process`, created if absent (a recycled one keeps its old contents: assign).
    V& set(std::int64_t process) {
        if (auto it = map_.find(process); it != map_.end())
            return it->second;
        if (spare_.empty())
            return map_[process];
        auto node = std::move(spare_.back());
        spare_.pop_back();
        node.key() = process;
        return map_.insert(std::move(node)).position->second;
    }
    V* find(std::int64_t process) {
        auto it = map_.find(process);
        return it == map_.end() ? nullptr : &it->second;
    }
    void erase(std::int64_t process) {
        auto it = map_.find(process);
        if (it == map_.end())
            return;
        if (spare_.size() < kSpareNodes)
            spare_.push_back(map_.extract(it));
        else
            map_.erase(it);
    }
    std::size_t size() const { return map_.size(); }
    typename Map::const_iterator begin() const { return map_.begin(); }
    typename Map::const_iterator end() const { return map_.end(); }

  private:
    static constexpr std::size_t kSpareNodes = 64;
    Map map_;
    std::vector<typename Map::node_type> spare_;
};

// The processes a check's violations involve, for an expectation that asks whether a fault's
// target took part. Exact (not capped like the witness list), bounded by the processes.
class ProcessSet {
  public:
    void add(std::int64_t process) { processes_.insert(process); }
    bool empty() const { return processes_.empty(); }
    std::vector<std::int64_t> sorted() const {
        std::vector<std::int64_t> out(processes_.begin(), processes_.end());
        std::sort(out.begin(), out.end());
        return out;
    }

  private:
    std::unordered_set<std::int64_t> processes_;
};

// What a caller (check.cpp, the dashboard, the engine's live counts) sees of the checks fed one
// event at a time - mutual exclusion, fencing, resource - and how each keeps its violations: every
// one counted, the first max_violations listed as witnesses {"kind", "key", "message", "witness"}
// (each check's header spells out its witness), and the processes they involve.
class StreamingCheck {
  public:
    virtual ~StreamingCheck() = default;

    virtual void on_event(const Event& event) = 0;
    // Closes the check at the last event's time. A check that judges each event as it comes has
    // nothing left to close.
    virtual void finish(std::int64_t /*end_time_ns*/) {}
    // checks.<name> of the report.
    virtual nlohmann::json result() const = 0;
    // The witnesses listed. Mutual exclusion keeps a list of its own: it patches each hold's end
    // into its witnesses when the hold ends.
    virtual nlohmann::json violations() const { return violations_; }
    std::uint64_t violation_count() const { return violation_count_; }

  protected:
    explicit StreamingCheck(std::size_t max_violations) : max_violations_(max_violations) {}

    // One more violation; `involved` are the processes it involves.
    void count_violation(std::initializer_list<std::int64_t> involved) {
        ++violation_count_;
        for (std::int64_t process : involved)
            processes_.add(process);
    }
    // Whether the witness of the violation just counted is among the first max_violations.
    bool witness_wanted() const { return violations_.size() < max_violations_; }
    void list_witness(nlohmann::json witness) { violations_.push_back(std::move(witness)); }

    std::size_t max_violations_;
    ProcessSet processes_;

  private:
    nlohmann::json violations_ = nlohmann::json::array();
    std::uint64_t violation_count_ = 0;
};

}  // namespace lockbench::checker
