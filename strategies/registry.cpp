#include "strategies/registry.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "strategies/external/adapter_registry.hpp"
#include "strategies/external/external_strategy.hpp"
#include "strategies/fenced.hpp"
#include "strategies/redlock.hpp"
#include "strategies/reentrant_hash.hpp"
#include "strategies/rwlock.hpp"
#include "strategies/rwlock_seed.hpp"
#include "strategies/set_nx_px.hpp"
#include "strategies/set_nx_px_del.hpp"
#include "strategies/set_nx_px_wait.hpp"
#include "strategies/setnx_getset.hpp"
#include "strategies/zk_mutex.hpp"
#include "strategies/zk_rwlock.hpp"

namespace lockbench {

namespace {
template <typename S>
StrategyInfo entry(std::string_view name, std::string_view summary) {
    return StrategyInfo{name, summary, S::static_capabilities(),
                        [](const StrategyOptions& o) { return std::make_unique<S>(o); }};
}
}  // namespace

const std::vector<StrategyInfo>& all_strategies() {
    static const std::vector<StrategyInfo> strategies{
        entry<SetnxGetset>("setnx_getset",
                           "blog recipe: SETNX expiry-ts, GETSET steal, GET+DEL unlock"),
        entry<SetNxPx>("set_nx_px", "redis.io: SET NX PX, Lua compare-and-delete release"),
        entry<SetNxPxDel>("set_nx_px_del", "T8: SET NX PX with a plain DEL release"),
        entry<SetNxPxWait>("set_nx_px_wait",
                           "set_nx_px + WAIT: a grant counts once a replica acknowledged it"),
        entry<ReentrantHash>("reentrant_hash",
                             "Redisson RLock: owner->count hash, watchdog, pub/sub wake-up"),
        entry<RwlockSeed>("rwlock_seed", "blog rwlock: Lua reader counter + writer key, no expiry"),
        entry<Rwlock>("rwlock", "Redisson RReadWriteLock: owner-bound readers, per-reader expiry"),
        entry<Fenced>("fenced", "set_nx_px + fencing number INCRed in the same script"),
        entry<Redlock>("redlock",
                       "redis.io Redlock: quorum of N masters, validity = lease-elapsed-drift"),
        entry<ZkMutex>("zk_mutex",
                       "Curator InterProcessMutex on ZooKeeper: ephemeral sequential znodes"),
        entry<ZkRwlock>("zk_rwlock",
                        "Curator InterProcessReadWriteLock: readers wait only for earlier writers"),
    };
    return strategies;
}

const StrategyInfo* find_strategy(std::string_view name) {
    for (const auto& s : all_strategies()) {
        if (s.name == name)
            return &s;
    }
    const auto spec = find_adapter(name);
    if (!spec)
        return nullptr;
    // An adapter's capabilities are what its probe said: probed once, kept for the process.
    struct External {
        AdapterSpec spec;
        std::string summary;
        StrategyInfo info;
    };
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<External>, std::less<>> known;
    const AdapterProbe& probe = probe_adapter(*spec);  // throws AdapterUnavailable
    std::lock_guard lock(mutex);
    if (auto it = known.find(name); it != known.end())
        return &it->second->info;
    auto entry = std::make_unique<External>();
    entry->spec = *spec;
    entry->summary = probe.library + " " + probe.version + ": " + spec->summary;
    entry->info = StrategyInfo{entry->spec.name, entry->summary, probe.capabilities,
                               [spec = *spec, probe](const StrategyOptions& o) {
                                   return std::make_unique<ExternalStrategy>(spec, probe, o);
                               }};
    return &known.emplace(std::string(name), std::move(entry)).first->second->info;
}

bool is_strategy_name(std::string_view name) {
    for (const auto& s : all_strategies()) {
        if (s.name == name)
            return true;
    }
    return find_adapter(name).has_value();
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const StrategyOptions& options) {
    const StrategyInfo* info = find_strategy(name);
    if (!info)
        throw std::invalid_argument("unknown strategy '" + std::string(name) + "'");
    return info->make(options);
}

}  // namespace lockbench
