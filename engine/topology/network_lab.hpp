#pragma once

// Hosts in network namespaces on this one machine, so that faults act on real network paths:
// each host is a network namespace of its own with one address, joined to the others by a veth
// pair to a bridge (in a namespace of its own too); the root namespace, where lockbench and its
// clients run, reaches them through one more veth. Servers are started inside a host, client
// threads may move into one, and a partition is iptables in the hosts' own namespaces, in
// Jepsen's shape: a grudge says who drops the packets of whom.
//
// Nothing outlives lockbench. Every namespace is held by a child process that dies with it
// (PR_SET_PDEATHSIG), and a namespace with no process (and no open descriptor) left is gone
// together with its veth ends and its iptables rules - also when lockbench is killed with
// SIGKILL. The root namespace's own firewall is never touched: a host drops what the root sends
// it, or what it would send to the root.
//
// Needs root (CAP_NET_ADMIN) and iproute2's `ip` and `iptables-restore`: network_lab_unavailable()
// says why not, in one line, so a scenario can be skipped saying so.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace lockbench {

// An IPv4 network: its address (host byte order) and prefix length, 10.200.3.0/24 say.
struct Ipv4Network {
    std::uint32_t address = 0;
    int prefix_length = 32;
    bool overlaps(const Ipv4Network& other) const;
    std::string to_string() const;
    bool operator==(const Ipv4Network&) const = default;
};

// The IPv4 networks this machine routes or holds an address in, from the output of
// `ip -4 -j route show table all` and `ip -4 -j addr show`. A catch-all route wider than a /8 (the
// default route, a VPN's 0.0.0.0/1 and 128.0.0.0/1) names no network of its own, and is left out:
// counting it would leave the lab no subnet anywhere. Throws std::invalid_argument naming what is
// not `ip`'s JSON.
std::vector<Ipv4Network> networks_in_use(std::string_view routes_json,
                                         std::string_view addresses_json);
// The output of an `ip -j` listing (argv) run here, whole: iproute2 says on stderr, and exits 0,
// when the kernel interrupted its dump (an interface or address came or went meanwhile, and the
// listing may lack a route this machine has); such a listing is read again. Throws
// EnvironmentError when `ip` fails or every read was interrupted.
std::string whole_ip_listing(const std::vector<std::string>& argv);
// A /24 of 10.0.0.0/8 that overlaps none of `in_use` (whose packets would otherwise go to the lab,
// or the lab's to them), searching from the `start`-th /24 (10.A.B.0/24 is number A * 256 + B)
// upwards, wrapping around; nothing when every one overlaps (10.0.0.0/8 routed to a VPN, say).
std::optional<Ipv4Network> free_lab_subnet(const std::vector<Ipv4Network>& in_use,
                                           std::uint32_t start);

// "" when hosts can be made here, or why not ("needs root (CAP_NET_ADMIN) ...").
std::string network_lab_unavailable();

class NetworkLab {
  public:
    // The root namespace, in grudges and addresses.
    static constexpr int kRoot = -1;

    // Makes one namespace per name (host i is names[i]) on a /24 of 10.0.0.0/8 that no route or
    // address of this machine overlaps, nor another lab of this process (free_lab_subnet); throws
    // EnvironmentError (embedded_server.hpp) when it cannot.
    explicit NetworkLab(std::vector<std::string> names);
    ~NetworkLab();
    NetworkLab(const NetworkLab&) = delete;
    NetworkLab& operator=(const NetworkLab&) = delete;

    std::size_t size() const { return hosts_.size(); }
    const std::string& name(std::size_t host) const { return hosts_.at(host).name; }
    // The host's address (kRoot: the root namespace's address on the lab's network).
    std::string address(int host) const;
    // The host named `name`; throws std::out_of_range.
    std::size_t index_of(const std::string& name) const;
    // An open descriptor of the host's network namespace, for setns(2) in a child process.
    int netns_fd(std::size_t host) const { return hosts_.at(host).netns_fd; }
    // The veth end in the root namespace ("lb<pid in hex><letter>"), and the lab's subnet.
    const std::string& root_interface() const { return root_interface_; }
    const std::string& subnet() const { return subnet_; }

    // Moves the calling thread into the host's namespace: sockets it opens from then on are the
    // host's. Throws EnvironmentError.
    void enter(std::size_t host) const;
    // Runs argv in the host's namespace (kRoot: here) and waits; `input` goes to its stdin.
    // Returns its output; throws EnvironmentError with it when it fails.
    std::string run(int host, const std::vector<std::string>& argv,
                    const std::string& input = "") const;

    // Who cannot hear from whom: host -> the hosts whose packets it drops. Replaces the partition
    // in place, on every host at once (one iptables-restore per host).
    using Grudge = std::map<int, std::set<int>>;
    void partition(const Grudge& grudge);
    void heal() {
        overlapping_.clear();
        partition({});
    }
    const Grudge& grudge() const { return grudge_; }
    // Partitions that overlap in time compose (two faults' cuts both hold): each adds its grudge
    // to the others', and removing it heals only what no other still cuts. Returns the handle
    // remove_partition() takes.
    int add_partition(const Grudge& grudge);
    void remove_partition(int handle);

  private:
    struct Host {
        std::string name;
        pid_t holder = -1;
        int netns_fd = -1;
    };
    Host make_host(std::string name) const;
    void teardown();
    void apply_rules(int host, const std::string& rules) const;

    std::vector<Host> hosts_;
    Host bridge_;
    std::string prefix_;  // "10.A.B."
    // The subnet this lab holds among the process's labs (freed by teardown).
    std::optional<Ipv4Network> reserved_;
    std::string subnet_;  // "10.A.B.0/24"
    std::string root_interface_;
    bool root_interface_created_ = false;  // ours to delete (another lab may have the name)
    Grudge grudge_;
    std::map<int, Grudge> overlapping_;  // by handle
    int next_handle_ = 0;
    void apply_overlapping();
};

// Jepsen's partition shapes over `nodes` (host indices): each returns a grudge in which every
// component hears only itself. `isolate`: `group` (e.g. the master and the clients beside it)
// against everyone else, the root namespace included; `halves`: the first half against the
// rest; `majorities_ring`: every node sees a majority, no two the same one; `bridge`: two
// halves that hear one node between them. The root namespace stays with everyone unless named.
NetworkLab::Grudge isolate_grudge(const std::set<int>& group, const std::set<int>& everyone);
NetworkLab::Grudge halves_grudge(const std::vector<int>& nodes);
NetworkLab::Grudge majorities_ring_grudge(const std::vector<int>& nodes);
NetworkLab::Grudge bridge_grudge(const std::vector<int>& nodes);

}  // namespace lockbench
