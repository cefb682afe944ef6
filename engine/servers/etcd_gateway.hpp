#pragma once

// The one HTTP client lockbench has: etcd's JSON gateway (grpc-gateway on the client port, v3
// API), spoken over a plain blocking socket - enough for the engine's own needs (is it up, who
// leads, a put and a get for tests, deleting a run's keys), with no library behind it. Clients'
// locks never go through here: they are the adapter's etcd client's business.
//
// Keys and values travel base64-encoded, as the gateway wants them; 64-bit numbers come back as
// JSON strings.

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "strategies/client/redis_connection.hpp"  // Endpoint

namespace lockbench {

// The gateway could not be reached, did not answer in time, or answered something that is not
// an HTTP 200 with JSON: what() says which, naming the endpoint.
class EtcdGatewayError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

std::string base64_encode(std::string_view bytes);
// Throws EtcdGatewayError on text that is not base64.
std::string base64_decode(std::string_view text);
// The end of the range of every key that starts with `prefix` (etcd's clientv3.GetPrefixRangeEnd).
std::string etcd_prefix_range_end(std::string_view prefix);

// `GET path` (body empty) or `POST path` with `body`, on one connection closed afterwards.
// Returns the JSON of a 200 reply.
nlohmann::json etcd_gateway_call(const Endpoint& endpoint, std::string_view path,
                                 const std::optional<nlohmann::json>& body,
                                 std::chrono::milliseconds timeout);

// GET /health says {"health": "true"}: the member serves and sees a leader.
bool etcd_healthy(const Endpoint& endpoint, std::chrono::milliseconds timeout);

// POST /v3/maintenance/status: who the member is and who it believes leads.
struct EtcdStatus {
    std::uint64_t member_id = 0;
    std::uint64_t leader_id = 0;  // 0: it knows no leader
    std::uint64_t raft_term = 0;
    std::string version;
    bool leads() const { return leader_id != 0 && leader_id == member_id; }
};
EtcdStatus etcd_status(const Endpoint& endpoint, std::chrono::milliseconds timeout);

void etcd_put(const Endpoint& endpoint, std::string_view key, std::string_view value,
              std::chrono::milliseconds timeout);
// Nothing when the key does not exist.
std::optional<std::string> etcd_get(const Endpoint& endpoint, std::string_view key,
                                    std::chrono::milliseconds timeout);
// Deletes every key that starts with `prefix` (which must not be empty: that would be every
// key); returns how many there were.
long long etcd_delete_prefix(const Endpoint& endpoint, std::string_view prefix,
                             std::chrono::milliseconds timeout);

}  // namespace lockbench
