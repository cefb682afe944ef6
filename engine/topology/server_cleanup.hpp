#pragma once

// What a run wrote on servers lockbench did not start (--redis, --inventory, --zookeeper,
// --etcd) is
// removed when it ends: lock keys that never expire (rwlock_seed's), fence counters, the
// protected resource's counters, lock znodes. A run's keys and znodes all carry its key prefix
// ("lockbench:<nonce>:", anywhere in the key: a cluster's hash tag or rwlock_seed's "LOCK:LOCK:"
// goes before it), so nothing else of the user's - another run's keys included - is touched.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run/workload.hpp"
#include "engine/topology/deployment.hpp"

namespace lockbench {

// Removes the run's keys from every master of `external` (a cluster's: every master serving slots
// that any of them names) and the run's znodes from the user's ZooKeeper (the lock nodes under
// /lockbench/locks, then the parents if nothing else is left in them) and the run's keys from the
// user's etcd (every key that starts with the prefix). Call it once the clients are gone.
// Returns summary.json's `cleanup`: {"redis": [{"server", "deleted"}], "zookeeper": {"hosts",
// "deleted"}, "etcd": {"server", "deleted"}, "left": ["what was left, where, and why"]}, or null
// when the run used no server of the user's. Never throws: what cannot be removed (a server that
// does not answer now) is named in `left`, and on stderr.
nlohmann::json clean_up_user_servers(const Workload& w, const Deployment& deployment,
                                     const std::vector<Endpoint>& external,
                                     const std::string& key_prefix);

}  // namespace lockbench
