#pragma once

// What a run wrote on servers lockbench did not start (--redis, --inventory, --zookeeper,
// --etcd) is
// removed when it ends: lock keys that never expire (rwlock_seed's), fence counters, the
// protected resource's counters, lock znodes. A run's keys and znodes all carry its key prefix
// ("lockbench:<nonce>:", anywhere in the key: a cluster's hash tag or rwlock_seed's "LOCK:LOCK:"
// goes before it), so nothing else of the user's - another run's keys included - is touched.
// A lock library behind an adapter names its keys itself, under the run's adapter namespace
// ("lockbench-<nonce>", PROTOCOL.md's init): `<namespace>:*` on Redis, the tree /<namespace> on
// ZooKeeper, `<namespace>/` on etcd go too.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run/workload.hpp"
#include "engine/topology/deployment.hpp"

namespace lockbench {

// Removes the run's keys from every master of `external` (a cluster's: every master serving slots
// that any of them names) and the run's znodes from the user's ZooKeeper (the lock nodes under
// /lockbench/locks, then the parents if nothing else is left in them) and the run's keys from the
// user's etcd (every key that starts with the prefix), and what the adapters wrote under
// `adapter_namespace` (none when empty). Call it once the clients are gone.
// Returns summary.json's `cleanup`: {"redis": [{"server", "deleted"}], "zookeeper": {"hosts",
// "deleted"}, "etcd": {"server", "deleted"}, "left": ["what was left, where, and why"]}, or null
// when the run used no server of the user's. Never throws: what cannot be removed (a server that
// does not answer now) is named in `left`, and on stderr (one line each) unless `quiet`: a caller
// that writes no summary says it in one line of its own.
nlohmann::json clean_up_user_servers(const Workload& w, const Deployment& deployment,
                                     const std::vector<Endpoint>& external,
                                     const std::string& key_prefix,
                                     const std::string& adapter_namespace = {}, bool quiet = false);

// A run that ends in an error after its clients wrote to the user's servers (a server died, a
// fault's control failed: exit 4) writes no summary, but its keys and znodes are removed all the
// same while the servers still answer; what could not be is named in one line on stderr. Declared
// once the key prefix exists and destroyed after the clients are gone; dismiss() once the run's
// own clean-up ran.
class CleanUpOnFailure {
  public:
    CleanUpOnFailure(const Workload& w, const Deployment& deployment,
                     const std::vector<Endpoint>& external, const std::string& key_prefix,
                     const std::string& adapter_namespace);
    ~CleanUpOnFailure();
    CleanUpOnFailure(const CleanUpOnFailure&) = delete;
    CleanUpOnFailure& operator=(const CleanUpOnFailure&) = delete;
    void dismiss() { dismissed_ = true; }

  private:
    const Workload& workload_;
    const Deployment& deployment_;
    const std::vector<Endpoint>& external_;
    const std::string& key_prefix_;
    const std::string& adapter_namespace_;
    int exceptions_at_start_;
    bool dismissed_ = false;
};

}  // namespace lockbench
