#include "strategies/client/cluster_routing.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace lockbench {

namespace {

std::uint16_t crc16_xmodem(std::string_view data) {
    std::uint16_t crc = 0;
    for (unsigned char byte : data) {
        crc ^= static_cast<std::uint16_t>(byte << 8);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                 : static_cast<std::uint16_t>(crc << 1);
    }
    return crc;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) ==
                      std::toupper(static_cast<unsigned char>(y));
           });
}

}  // namespace

int key_slot(std::string_view key) {
    const auto open = key.find('{');
    if (open != std::string_view::npos) {
        const auto close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1)
            key = key.substr(open + 1, close - open - 1);
    }
    return crc16_xmodem(key) % kClusterSlots;
}

std::optional<std::string_view> command_key(const std::vector<std::string>& args) {
    if (args.size() < 2)
        return std::nullopt;
    const std::string_view name = args[0];
    if (iequals(name, "EVAL") || iequals(name, "EVALSHA") || iequals(name, "EVAL_RO") ||
        iequals(name, "EVALSHA_RO") || iequals(name, "FCALL")) {
        if (args.size() < 4 || args[2] == "0")
            return std::nullopt;
        return args[3];
    }
    static constexpr std::array<std::string_view, 24> keyless = {
        "PING",    "WAIT",   "SCRIPT",   "CLUSTER",  "INFO",   "CONFIG",  "ASKING", "AUTH",
        "MULTI",   "EXEC",   "DISCARD",  "CLIENT",   "SELECT", "ECHO",    "TIME",   "SUBSCRIBE",
        "PUBLISH", "DBSIZE", "FLUSHALL", "READONLY", "HELLO",  "COMMAND", "DEBUG",  "UNSUBSCRIBE"};
    for (auto k : keyless) {
        if (iequals(name, k))
            return std::nullopt;
    }
    return args[1];
}

std::optional<Redirect> parse_redirect(std::string_view error) {
    Redirect r;
    if (error.starts_with("MOVED ")) {
        error.remove_prefix(6);
    } else if (error.starts_with("ASK ")) {
        r.ask = true;
        error.remove_prefix(4);
    } else {
        return std::nullopt;
    }
    const auto space = error.find(' ');
    if (space == std::string_view::npos)
        return std::nullopt;
    auto [end, ec] = std::from_chars(error.data(), error.data() + space, r.slot);
    if (ec != std::errc() || end != error.data() + space || r.slot < 0 || r.slot >= kClusterSlots)
        return std::nullopt;
    try {
        r.node = Endpoint::parse(error.substr(space + 1));
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
    return r;
}

ClusterRouting::ClusterRouting(EventLoop& loop, std::vector<Endpoint> seeds,
                               ConnectionOptions options)
    : loop_(loop), options_(options), nodes_(std::move(seeds)), slot_owner_(kClusterSlots, -1) {
    if (nodes_.empty())
        throw std::invalid_argument("a cluster needs at least one seed node");
    password_ = nodes_.front().password;
    user_ = nodes_.front().user;
    connections_.resize(nodes_.size());
    suspect_.resize(nodes_.size(), false);
}

// A connection forgets its router before it fails its commands (~RedisConnection), so the
// members may go in any order.
ClusterRouting::~ClusterRouting() = default;

std::size_t ClusterRouting::index_of(const Endpoint& node) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].same_address(node))
            return i;
    }
    Endpoint learnt = node;
    learnt.password = password_;
    learnt.user = user_;
    nodes_.push_back(std::move(learnt));
    connections_.emplace_back();
    suspect_.push_back(false);
    return nodes_.size() - 1;
}

RedisConnection& ClusterRouting::connection(std::size_t index) {
    auto& c = connections_.at(index);
    if (!c) {
        c = std::make_unique<RedisConnection>(loop_, nodes_[index], options_);
        c->set_router(this);
        if (disabled_)
            c->disable(*disabled_);
    }
    return *c;
}

std::size_t ClusterRouting::any_live_node() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (!suspect_[i])
            return i;
    }
    // Every node failed once: they may be back (a restart); ask them again, in order.
    std::fill(suspect_.begin(), suspect_.end(), false);
    return 0;
}

RedisConnection& ClusterRouting::route(const std::vector<std::string>& args) {
    const auto key = command_key(args);
    if (!key) {
        if (suspect_.at(last_))
            last_ = any_live_node();
        return connection(last_);
    }
    auto& owner = slot_owner_[static_cast<std::size_t>(key_slot(*key))];
    // A slot not in the map is sent to any live node and taken to be its until it answers
    // MOVED (or fails): the cluster corrects a wrong guess on the first command.
    if (owner < 0)
        owner = static_cast<std::int16_t>(any_live_node());
    last_ = static_cast<std::size_t>(owner);
    return connection(last_);
}

RedisConnection& ClusterRouting::moved(int slot, const Endpoint& owner) {
    const std::size_t i = index_of(owner);
    slot_owner_.at(static_cast<std::size_t>(slot)) = static_cast<std::int16_t>(i);
    suspect_[i] = false;
    last_ = i;
    return connection(i);
}

RedisConnection& ClusterRouting::connection_to(const Endpoint& node) {
    return connection(index_of(node));
}

void ClusterRouting::failed(RedisConnection& conn) {
    for (std::size_t i = 0; i < connections_.size(); ++i) {
        if (connections_[i].get() != &conn)
            continue;
        suspect_[i] = true;
        std::replace(slot_owner_.begin(), slot_owner_.end(), static_cast<std::int16_t>(i),
                     std::int16_t{-1});
    }
}

void ClusterRouting::disable(const std::string& reason) {
    disabled_ = reason;
    for (auto& c : connections_) {
        if (c)
            c->disable(reason);
    }
}

std::optional<Endpoint> ClusterRouting::owner_of(std::string_view key) const {
    const int owner = slot_owner_[static_cast<std::size_t>(key_slot(key))];
    if (owner < 0)
        return std::nullopt;
    return nodes_[static_cast<std::size_t>(owner)];
}

}  // namespace lockbench
