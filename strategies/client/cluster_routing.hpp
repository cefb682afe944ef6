#pragma once

// Redis Cluster on the client side: which node a command goes to, and what a redirect means.
// A key lives in one of 16384 slots (CRC16 of the key, or of its {hash tag}); each slot has one
// master. A client keeps a map of slot -> node, learnt as the cluster teaches it: a node that
// does not own a key's slot answers MOVED (the slot lives elsewhere now: update the map) or ASK
// (this one command goes elsewhere, during a migration), and neither ran the command, so sending
// it again is safe. After an I/O error the node's slots are forgotten: a failover may have moved
// them, and the next command asks a live node, which answers MOVED to the promoted replica.
//
// Strategies do not know: a Session in cluster mode hands them a RedisConnection whose commands
// this router places (RedisConnection::set_router). Keys a script touches together must share a
// slot (hash tags), as Redis Cluster demands of every client.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

inline constexpr int kClusterSlots = 16384;

// The slot of `key`: CRC16-XMODEM of its hash tag (the text between the first '{' and the next
// '}', when not empty) or of the whole key, modulo 16384.
int key_slot(std::string_view key);

// The key a command addresses (its first key), or nothing for a command without one (PING,
// WAIT, SCRIPT ...). EVAL/EVALSHA: the first of its KEYS.
std::optional<std::string_view> command_key(const std::vector<std::string>& args);

// A MOVED or ASK error reply, parsed: "MOVED 3999 127.0.0.1:6381".
struct Redirect {
    bool ask = false;
    int slot = 0;
    Endpoint node;
};
std::optional<Redirect> parse_redirect(std::string_view error);

// One client's view of a cluster: its connections (one per node it has talked to) and its map.
class ClusterRouting final : public ClusterRouter {
  public:
    // `seeds`: the nodes the client knows at start (their password is used for every node).
    ClusterRouting(EventLoop& loop, std::vector<Endpoint> seeds, ConnectionOptions options);
    ~ClusterRouting() override;
    ClusterRouting(const ClusterRouting&) = delete;
    ClusterRouting& operator=(const ClusterRouting&) = delete;

    // What a strategy talks to: every command on it is placed by this router.
    RedisConnection& entry() { return connection(0); }

    RedisConnection& route(const std::vector<std::string>& args) override;
    RedisConnection& moved(int slot, const Endpoint& owner) override;
    RedisConnection& connection_to(const Endpoint& node) override;
    void failed(RedisConnection& conn) override;

    // A crash of the client: every connection, and every one made later, refuses commands.
    void disable(const std::string& reason);
    // Where the map places `key` now (for tests and the nemesis's report), if known.
    std::optional<Endpoint> owner_of(std::string_view key) const;

  private:
    std::size_t index_of(const Endpoint& node);
    RedisConnection& connection(std::size_t index);
    // A node to ask about a slot the map does not know: the first not suspected of being down.
    std::size_t any_live_node();

    EventLoop& loop_;
    ConnectionOptions options_;
    std::string password_;  // and user_: a learnt node AUTHs as the seeds do
    std::string user_;
    std::vector<Endpoint> nodes_;
    std::vector<std::unique_ptr<RedisConnection>> connections_;  // parallel to nodes_
    std::vector<bool> suspect_;                                  // failed since last heard of
    std::vector<std::int16_t> slot_owner_;                       // index into nodes_, -1: unknown
    // Where the last command with a key went: a command without one (WAIT after a SET) follows it.
    std::size_t last_ = 0;
    std::optional<std::string> disabled_;
};

}  // namespace lockbench
