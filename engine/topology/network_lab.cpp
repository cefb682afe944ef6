#include "engine/topology/network_lab.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <sched.h>
#include <signal.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "engine/servers/redis_server.hpp"  // EnvironmentError, find_executable

namespace lockbench {

namespace {

std::uint32_t network_mask(int prefix_length) {
    return prefix_length <= 0 ? 0 : ~std::uint32_t{0} << (32 - prefix_length);
}

// "10.1.2.0/24" or "10.1.2.3" (a host: /32); nothing for what is not IPv4.
std::optional<Ipv4Network> parse_network(std::string_view text) {
    const std::size_t slash = text.find('/');
    const std::string address(text.substr(0, slash));
    in_addr parsed{};
    if (::inet_pton(AF_INET, address.c_str(), &parsed) != 1)
        return std::nullopt;
    int length = 32;
    if (slash != std::string_view::npos) {
        const std::string_view digits = text.substr(slash + 1);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
        if (ec != std::errc() || end != digits.data() + digits.size() || length < 0 || length > 32)
            return std::nullopt;
    }
    const std::uint32_t host_order = ntohl(parsed.s_addr);
    return Ipv4Network{host_order & network_mask(length), length};
}

nlohmann::json parse_ip_json(std::string_view text, const char* what) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_array())
        throw std::invalid_argument(std::string(what) + " is not ip's JSON (an array)");
    return j;
}

// The /24s of 10.0.0.0/8 that labs of this process hold now: two labs at once (parallel tests,
// a suite) must not share one, and they may be picked before either's routes exist.
std::mutex lab_subnets_mutex;
std::vector<Ipv4Network> lab_subnets;

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// Reads `fd` to its end.
std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return out;
    }
}

std::string joined(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv)
        out += (out.empty() ? "" : " ") + a;
    return out;
}

struct Finished {
    int status = 0;      // waitpid's
    std::string output;  // stdout, and stderr too unless asked apart
    std::string errors;  // stderr, when asked apart
};

// Runs argv in the network namespace `fd` (-1: here) to its end.
Finished run_to_end(int fd, const std::vector<std::string>& argv, const std::string& input,
                    bool errors_apart) {
    std::vector<std::string> args = argv;
    args[0] = find_executable(args[0]);
    std::vector<char*> cargv;
    for (auto& a : args)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    int out[2], in[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw EnvironmentError(errno_text("pipe"));
    if (::pipe2(in, O_CLOEXEC) != 0) {
        ::close(out[0]);
        ::close(out[1]);
        throw EnvironmentError(errno_text("pipe"));
    }
    // A file, not a pipe: read after the child ends, it cannot fill up and stall it.
    const int errors = errors_apart ? ::memfd_create("lockbench-stderr", MFD_CLOEXEC) : out[1];
    if (errors < 0) {
        for (int f : {out[0], out[1], in[0], in[1]})
            ::close(f);
        throw EnvironmentError(errno_text("memfd_create"));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        for (int f : {out[0], out[1], in[0], in[1]})
            ::close(f);
        if (errors_apart)
            ::close(errors);
        throw EnvironmentError(errno_text("fork"));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (fd >= 0 && ::setns(fd, CLONE_NEWNET) != 0)
            ::_exit(126);
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(errors, STDERR_FILENO);
        ::execv(cargv[0], cargv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(in[0]);
    std::size_t written = 0;
    while (written < input.size()) {
        ssize_t n = ::write(in[1], input.data() + written, input.size() - written);
        if (n <= 0)
            break;
        written += static_cast<std::size_t>(n);
    }
    ::close(in[1]);
    Finished finished;
    finished.output = read_all(out[0]);
    ::close(out[0]);
    ::waitpid(pid, &finished.status, 0);
    if (errors_apart) {
        ::lseek(errors, 0, SEEK_SET);
        finished.errors = read_all(errors);
        ::close(errors);
    }
    return finished;
}

}  // namespace

bool Ipv4Network::overlaps(const Ipv4Network& other) const {
    const std::uint32_t mask = network_mask(std::min(prefix_length, other.prefix_length));
    return (address & mask) == (other.address & mask);
}

std::string Ipv4Network::to_string() const {
    return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 255) + "." +
           std::to_string((address >> 8) & 255) + "." + std::to_string(address & 255) + "/" +
           std::to_string(prefix_length);
}

std::vector<Ipv4Network> networks_in_use(std::string_view routes_json,
                                         std::string_view addresses_json) {
    std::vector<Ipv4Network> out;
    const auto keep = [&out](const std::optional<Ipv4Network>& network) {
        if (network && network->prefix_length >= 8)
            out.push_back(*network);
    };
    for (const auto& route : parse_ip_json(routes_json, "`ip -j route` output")) {
        const auto dst = route.is_object() ? route.find("dst") : route.end();
        if (dst != route.end() && dst->is_string() && *dst != "default")
            keep(parse_network(dst->get<std::string>()));
    }
    for (const auto& link : parse_ip_json(addresses_json, "`ip -j addr` output")) {
        const auto info = link.is_object() ? link.find("addr_info") : link.end();
        if (info == link.end() || !info->is_array())
            continue;
        for (const auto& a : *info) {
            if (!a.is_object() || a.value("family", "") != "inet" || !a.contains("local") ||
                !a["local"].is_string() || !a.value("prefixlen", nlohmann::json()).is_number())
                continue;
            keep(parse_network(a["local"].get<std::string>() + "/" +
                               std::to_string(a["prefixlen"].get<int>())));
        }
    }
    return out;
}

std::optional<Ipv4Network> free_lab_subnet(const std::vector<Ipv4Network>& in_use,
                                           std::uint32_t start) {
    constexpr std::uint32_t kSubnets = 1u << 16;  // the /24s of 10.0.0.0/8
    for (std::uint32_t i = 0; i < kSubnets; ++i) {
        const Ipv4Network candidate{(10u << 24) | (((start + i) % kSubnets) << 8), 24};
        if (std::none_of(in_use.begin(), in_use.end(),
                         [&](const Ipv4Network& n) { return n.overlaps(candidate); }))
            return candidate;
    }
    return std::nullopt;
}

std::string network_lab_unavailable() {
    if (::geteuid() != 0) {
        return "needs root (CAP_NET_ADMIN) to make hosts in network namespaces; run it as root, "
               "or skip the scenarios that need real network paths";
    }
    for (const char* tool : {"ip", "iptables-restore"}) {
        try {
            find_executable(tool);
        } catch (const EnvironmentError&) {
            return std::string(tool) +
                   " not found in PATH: hosts in network namespaces need iproute2 and iptables "
                   "(scripts/bootstrap.sh installs them)";
        }
    }
    return "";
}

NetworkLab::Host NetworkLab::make_host(std::string name) const {
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0)
        throw EnvironmentError(errno_text("pipe"));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(ready[0]);
        ::close(ready[1]);
        throw EnvironmentError(errno_text("fork"));
    }
    if (pid == 0) {
        // The holder: a namespace of its own, and nothing else to do until lockbench dies.
        ::close(ready[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent)
            ::_exit(127);
        ::setpgid(0, 0);  // a Ctrl-C at the terminal reaches lockbench only
        const char ok = ::unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
        [[maybe_unused]] auto ignored = ::write(ready[1], &ok, 1);
        ::close(ready[1]);
        for (;;)
            ::pause();
    }
    ::close(ready[1]);
    char ok = 'n';
    const bool got = ::read(ready[0], &ok, 1) == 1;
    ::close(ready[0]);
    Host h{std::move(name), pid, -1};
    if (got && ok == 'y') {
        const std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
        h.netns_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (h.netns_fd < 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        throw EnvironmentError("cannot make a network namespace for host " + h.name +
                               " (needs CAP_NET_ADMIN)");
    }
    return h;
}

NetworkLab::NetworkLab(std::vector<std::string> names) {
    if (const std::string why = network_lab_unavailable(); !why.empty())
        throw EnvironmentError(why);
    {
        // Its own route would take the packets of a network this machine already reaches (a
        // VPN's, a container bridge's), or give the lab an address someone else holds.
        std::vector<Ipv4Network> in_use;
        try {
            in_use = networks_in_use(
                whole_ip_listing({"ip", "-4", "-j", "route", "show", "table", "all"}),
                whole_ip_listing({"ip", "-4", "-j", "addr", "show"}));
        } catch (const std::invalid_argument& e) {
            throw EnvironmentError(std::string("cannot read this machine's routes: ") + e.what());
        }
        std::lock_guard lock(lab_subnets_mutex);
        in_use.insert(in_use.end(), lab_subnets.begin(), lab_subnets.end());
        // A random place to start: labs of other processes starting at once rarely meet.
        std::random_device random;
        const auto picked = free_lab_subnet(in_use, (200 + random() % 50) * 256 + random() % 256);
        if (!picked) {
            throw EnvironmentError(
                "no /24 of 10.0.0.0/8 is free for the network lab: this "
                "machine's routes and addresses cover all of it");
        }
        reserved_ = picked;
        lab_subnets.push_back(*picked);
    }
    subnet_ = reserved_->to_string();
    prefix_ = subnet_.substr(0, subnet_.rfind('.') + 1);
    // The root end's name is this process's and no other's ("lb", the pid in hex, a letter per
    // lab), so a lab never takes another's name and a test can tell its own.
    static std::atomic<unsigned> labs{0};
    char root_name[16];
    std::snprintf(root_name, sizeof root_name, "lb%x%c", static_cast<unsigned>(::getpid()),
                  static_cast<char>('a' + labs++ % 26));
    root_interface_ = root_name;
    try {
        bridge_ = make_host("bridge");
        run(-2, {"ip", "link", "set", "lo", "up"});
        run(-2, {"ip", "link", "add", "br0", "type", "bridge"});
        run(-2, {"ip", "link", "set", "br0", "up"});
        for (auto& name : names)
            hosts_.push_back(make_host(std::move(name)));
        for (std::size_t i = 0; i < hosts_.size(); ++i) {
            const std::string end = "h" + std::to_string(i);
            run(kRoot,
                {"ip", "link", "add", "name", end, "netns", std::to_string(bridge_.holder), "type",
                 "veth", "peer", "name", "eth0", "netns", std::to_string(hosts_[i].holder)});
            run(-2, {"ip", "link", "set", end, "master", "br0", "up"});
            const int h = static_cast<int>(i);
            run(h, {"ip", "link", "set", "lo", "up"});
            run(h, {"ip", "addr", "add", address(h) + "/24", "dev", "eth0"});
            run(h, {"ip", "link", "set", "eth0", "up"});
        }
        run(kRoot, {"ip", "link", "add", "name", root_interface_, "type", "veth", "peer", "name",
                    "up0", "netns", std::to_string(bridge_.holder)});
        root_interface_created_ = true;
        run(-2, {"ip", "link", "set", "up0", "master", "br0", "up"});
        run(kRoot, {"ip", "addr", "add", address(kRoot) + "/24", "dev", root_interface_});
        run(kRoot, {"ip", "link", "set", root_interface_, "up"});
    } catch (...) {
        teardown();
        throw;
    }
}

NetworkLab::~NetworkLab() {
    teardown();
}

void NetworkLab::teardown() {
    // The root namespace's veth end at once (the kernel deletes a dead namespace's devices in its
    // own time; the other ends go with their namespaces).
    if (root_interface_created_) {
        root_interface_created_ = false;
        try {
            run(kRoot, {"ip", "link", "del", root_interface_});
        } catch (const EnvironmentError&) {
        }
    }
    // Descriptors first (an open one keeps a namespace alive), then the holders: each namespace
    // goes with its last process, and its veth ends and iptables rules with it.
    for (Host* h : [&] {
             std::vector<Host*> all{&bridge_};
             for (auto& host : hosts_)
                 all.push_back(&host);
             return all;
         }()) {
        if (h->netns_fd >= 0)
            ::close(h->netns_fd);
        h->netns_fd = -1;
        if (h->holder > 0) {
            ::kill(h->holder, SIGKILL);
            ::waitpid(h->holder, nullptr, 0);
        }
        h->holder = -1;
    }
    hosts_.clear();
    if (reserved_) {
        std::lock_guard lock(lab_subnets_mutex);
        std::erase(lab_subnets, *reserved_);
        reserved_.reset();
    }
}

std::string NetworkLab::address(int host) const {
    if (host == kRoot)
        return prefix_ + "1";
    if (host < 0 || static_cast<std::size_t>(host) >= hosts_.size())
        throw std::out_of_range("NetworkLab: no host " + std::to_string(host));
    return prefix_ + std::to_string(10 + host);
}

std::size_t NetworkLab::index_of(const std::string& name) const {
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
        if (hosts_[i].name == name)
            return i;
    }
    throw std::out_of_range("NetworkLab: no host named " + name);
}

void NetworkLab::enter(std::size_t host) const {
    if (::setns(netns_fd(host), CLONE_NEWNET) != 0)
        throw EnvironmentError(errno_text(("setns into host " + name(host)).c_str()));
}

// Host -2 is the bridge's namespace (for setting up the lab only).
std::string NetworkLab::run(int host, const std::vector<std::string>& argv,
                            const std::string& input) const {
    const int fd = host == kRoot ? -1 : host == -2 ? bridge_.netns_fd : netns_fd(host);
    Finished finished = run_to_end(fd, argv, input, /*errors_apart=*/false);
    if (!WIFEXITED(finished.status) || WEXITSTATUS(finished.status) != 0) {
        std::string where = host == kRoot ? "the root namespace" : "host ";
        if (host != kRoot)
            where += host == -2 ? std::string("bridge") : name(static_cast<std::size_t>(host));
        std::string text = finished.output;
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        throw EnvironmentError(joined(argv) + " failed in " + where +
                               (text.empty() ? "" : ": " + text));
    }
    return finished.output;
}

std::string whole_ip_listing(const std::vector<std::string>& argv) {
    // iproute2 prints "Dump was interrupted and may be inconsistent." and exits 0 when an
    // interface came or went during its netlink dump; the listing may then lack a route this
    // machine has. Interfaces come and go in bursts (a lab being built), so a few reads see a
    // quiet moment.
    constexpr int kAttempts = 20;
    std::string last_errors;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        Finished finished = run_to_end(-1, argv, "", /*errors_apart=*/true);
        last_errors = finished.errors;
        while (!last_errors.empty() && (last_errors.back() == '\n' || last_errors.back() == '\r'))
            last_errors.pop_back();
        if (!WIFEXITED(finished.status) || WEXITSTATUS(finished.status) != 0) {
            throw EnvironmentError(joined(argv) + " failed in the root namespace" +
                                   (last_errors.empty() ? "" : ": " + last_errors));
        }
        if (last_errors.find("interrupted") == std::string::npos)
            return finished.output;
    }
    throw EnvironmentError(joined(argv) + " was interrupted " + std::to_string(kAttempts) +
                           " times in a row (interfaces are coming and going): " + last_errors);
}

void NetworkLab::apply_rules(int host, const std::string& rules) const {
    run(host, {"iptables-restore", "-w", "5"},
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" + rules +
            "COMMIT\n");
}

void NetworkLab::partition(const Grudge& grudge) {
    std::map<int, std::string> rules;
    for (std::size_t i = 0; i < hosts_.size(); ++i)
        rules[static_cast<int>(i)];
    for (const auto& [host, unheard] : grudge) {
        for (int from : unheard) {
            if (from == host)
                continue;
            if (host != kRoot) {
                rules[host] += "-A INPUT -s " + address(from) + "/32 -j DROP\n";
            } else if (from != kRoot) {
                // The root's own firewall stays as it was: `from` drops what it sends the root.
                rules[from] += "-A OUTPUT -d " + address(kRoot) + "/32 -j DROP\n";
            }
        }
    }
    for (const auto& [host, text] : rules)
        apply_rules(host, text);
    grudge_ = grudge;
}

int NetworkLab::add_partition(const Grudge& grudge) {
    const int handle = next_handle_++;
    overlapping_[handle] = grudge;
    apply_overlapping();
    return handle;
}

void NetworkLab::remove_partition(int handle) {
    if (overlapping_.erase(handle))
        apply_overlapping();
}

void NetworkLab::apply_overlapping() {
    Grudge all;
    for (const auto& [handle, grudge] : overlapping_) {
        for (const auto& [host, unheard] : grudge)
            all[host].insert(unheard.begin(), unheard.end());
    }
    partition(all);
}

namespace {

NetworkLab::Grudge components_grudge(const std::vector<std::set<int>>& components) {
    NetworkLab::Grudge g;
    for (std::size_t a = 0; a < components.size(); ++a) {
        for (int host : components[a]) {
            for (std::size_t b = 0; b < components.size(); ++b) {
                if (a != b)
                    g[host].insert(components[b].begin(), components[b].end());
            }
        }
    }
    return g;
}

}  // namespace

NetworkLab::Grudge isolate_grudge(const std::set<int>& group, const std::set<int>& everyone) {
    std::set<int> rest;
    for (int h : everyone) {
        if (!group.count(h))
            rest.insert(h);
    }
    return components_grudge({group, rest});
}

NetworkLab::Grudge halves_grudge(const std::vector<int>& nodes) {
    const std::size_t half = nodes.size() / 2;
    return components_grudge({std::set<int>(nodes.begin(), nodes.begin() + half),
                              std::set<int>(nodes.begin() + half, nodes.end())});
}

NetworkLab::Grudge majorities_ring_grudge(const std::vector<int>& nodes) {
    // Jepsen's majorities-ring: node i hears the nodes within `reach` of it on a ring - itself
    // and at least a majority in all - so each sees a majority and no two see the same one.
    // Meaningful from 5 nodes on (with 3, everyone would hear everyone).
    NetworkLab::Grudge g;
    const int n = static_cast<int>(nodes.size());
    const int majority = n / 2 + 1;
    const int reach = majority / 2;  // ceil((majority - 1) / 2)
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            const int d = std::min((i - j + n) % n, (j - i + n) % n);
            if (d > reach)
                g[nodes[static_cast<std::size_t>(i)]].insert(nodes[static_cast<std::size_t>(j)]);
        }
    }
    return g;
}

NetworkLab::Grudge bridge_grudge(const std::vector<int>& nodes) {
    // Two halves that do not hear each other, and one node in the middle both hear.
    const std::size_t mid = nodes.size() / 2;
    std::set<int> left(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(mid));
    std::set<int> right(nodes.begin() + static_cast<std::ptrdiff_t>(mid) + 1, nodes.end());
    NetworkLab::Grudge g;
    for (int l : left)
        g[l] = right;
    for (int r : right)
        g[r] = left;
    return g;
}

}  // namespace lockbench
