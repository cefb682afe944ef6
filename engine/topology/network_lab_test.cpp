// Hosts in network namespaces: Jepsen's partition shapes as grudges, and a real lab - a
// redis-server inside a host, reached from the root namespace and from another host, cut off
// by iptables and healed, and nothing left behind when the lab goes. The lab needs root: without
// it these tests are skipped, saying why.

#include "engine/topology/network_lab.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <set>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/ci/suite.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/controlled_server.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/testing/child_processes.hpp"
#include "engine/topology/inventory.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using Grudge = NetworkLab::Grudge;
using nlohmann::json;
using testing::TempDir;

TEST(Grudges, IsolateCutsTheGroupFromEveryoneElseBothWays) {
    const Grudge g = isolate_grudge({0, 3}, {NetworkLab::kRoot, 0, 1, 2, 3});
    EXPECT_EQ(g.at(0), (std::set<int>{NetworkLab::kRoot, 1, 2}));
    EXPECT_EQ(g.at(3), (std::set<int>{NetworkLab::kRoot, 1, 2}));
    EXPECT_EQ(g.at(1), (std::set<int>{0, 3}));
    EXPECT_EQ(g.at(NetworkLab::kRoot), (std::set<int>{0, 3}));
}

TEST(Grudges, HalvesSplitAMinorityFromAMajority) {
    const Grudge g = halves_grudge({0, 1, 2, 3, 4});
    EXPECT_EQ(g.at(0), (std::set<int>{2, 3, 4}));
    EXPECT_EQ(g.at(1), (std::set<int>{2, 3, 4}));
    EXPECT_EQ(g.at(4), (std::set<int>{0, 1}));
}

TEST(Grudges, InAMajoritiesRingEveryNodeHearsADifferentMajority) {
    const std::vector<int> nodes{0, 1, 2, 3, 4};
    const Grudge g = majorities_ring_grudge(nodes);
    std::set<std::set<int>> views;
    for (int n : nodes) {
        std::set<int> hears;
        for (int m : nodes) {
            if (!g.count(n) || !g.at(n).count(m))
                hears.insert(m);
        }
        EXPECT_EQ(hears.size(), 3u) << n;  // itself and its two neighbours: a majority of 5
        EXPECT_TRUE(hears.count(n));
        views.insert(hears);
    }
    EXPECT_EQ(views.size(), 5u);  // no two the same
}

TEST(Grudges, ABridgeNodeHearsBothHalvesThatDoNotHearEachOther) {
    const Grudge g = bridge_grudge({0, 1, 2, 3, 4});
    EXPECT_EQ(g.at(0), (std::set<int>{3, 4}));
    EXPECT_EQ(g.at(4), (std::set<int>{0, 1}));
    EXPECT_FALSE(g.count(2));  // the bridge hears everyone
}

Ipv4Network net(const std::string& text) {
    const auto parsed = networks_in_use(R"([{"dst": ")" + text + R"("}])", "[]");
    EXPECT_EQ(parsed.size(), 1u) << text;
    return parsed.empty() ? Ipv4Network{} : parsed.front();
}

// `ip -4 -j route show table all` and `ip -4 -j addr show` as this development machine prints
// them (a VM's eth0, loopback), with a container bridge and a VPN's catch-all routes added.
constexpr const char* kRoutes = R"([
    {"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]},
    {"dst":"0.0.0.0/1","gateway":"10.8.0.1","dev":"tun0","flags":[]},
    {"dst":"128.0.0.0/1","gateway":"10.8.0.1","dev":"tun0","flags":[]},
    {"dst":"10.8.0.0/24","dev":"tun0","protocol":"kernel","scope":"link","flags":[]},
    {"dst":"192.0.2.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"192.0.2.2",
     "flags":[]},
    {"type":"unreachable","dst":"10.200.0.0/16","flags":[]},
    {"type":"local","dst":"127.0.0.0/8","dev":"lo","table":"local","protocol":"kernel",
     "scope":"host","prefsrc":"127.0.0.1","flags":[]},
    {"type":"broadcast","dst":"192.0.2.255","dev":"eth0","table":"local","protocol":"kernel",
     "scope":"link","prefsrc":"192.0.2.2","flags":[]}])";
constexpr const char* kAddresses = R"([
    {"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8},
                                            {"family":"inet","local":"10.201.0.9","prefixlen":32}]},
    {"ifindex":2,"ifname":"ifb0","addr_info":[]},
    {"ifindex":4,"ifname":"eth0","addr_info":[{"family":"inet","local":"192.0.2.2","prefixlen":24},
                                              {"family":"inet6","local":"fd00::2","prefixlen":64}]},
    {"ifindex":5,"ifname":"docker0","addr_info":[{"family":"inet","local":"10.201.1.1",
                                                  "prefixlen":23}]}])";

TEST(LabSubnet, ReadsEveryNetworkTheMachineRoutesOrHoldsButNotTheCatchAlls) {
    EXPECT_EQ(
        networks_in_use(kRoutes, kAddresses),
        (std::vector<Ipv4Network>{net("10.8.0.0/24"), net("192.0.2.0/24"), net("10.200.0.0/16"),
                                  net("127.0.0.0/8"), net("192.0.2.255"), net("127.0.0.0/8"),
                                  net("10.201.0.9"), net("192.0.2.0/24"), net("10.201.0.0/23")}));
    EXPECT_EQ(net("10.201.1.1/23").to_string(), "10.201.0.0/23");  // an address names its network
    EXPECT_THROW(networks_in_use("ip: unknown option -j", "[]"), std::invalid_argument);
    EXPECT_THROW(networks_in_use("[]", R"({"ifname": "lo"})"), std::invalid_argument);
}

// A stand-in for `ip` that says its dump was interrupted (as iproute2 does, exiting 0, when an
// interface comes or goes during it) the first `interrupted` times it runs, printing half a
// listing, and then prints a whole one. The kernel's interruption is what it isolates: it cannot
// be made to happen on demand.
std::string interrupted_ip(const TempDir& dir, int interrupted) {
    const auto script = dir.path() / "ip";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "n=$(cat '" << (dir.path() / "runs").string()
                          << "' 2>/dev/null || echo 0)\n"
                          << "echo $((n + 1)) > '" << (dir.path() / "runs").string() << "'\n"
                          << "if [ \"$n\" -lt " << interrupted << " ]; then\n"
                          << "  echo 'Dump was interrupted and may be inconsistent.' >&2\n"
                          << "  echo '[{\"dst\":\"10.1.0.0/16\"}'\n"
                          << "  exit 0\n"
                          << "fi\n"
                          << "echo '[{\"dst\":\"10.1.0.0/16\"},{\"dst\":\"10.2.0.0/16\"}]'\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    return script.string();
}

int runs_of(const TempDir& dir) {
    int runs = 0;
    std::ifstream(dir.path() / "runs") >> runs;
    return runs;
}

TEST(LabSubnet, AnInterruptedListingIsReadAgainUntilItIsWhole) {
    TempDir dir;
    const std::string ip = interrupted_ip(dir, 2);
    EXPECT_EQ(whole_ip_listing({ip, "-4", "-j", "route"}),
              "[{\"dst\":\"10.1.0.0/16\"},{\"dst\":\"10.2.0.0/16\"}]\n");
    EXPECT_EQ(runs_of(dir), 3);
}

TEST(LabSubnet, AListingInterruptedEveryTimeIsAnEnvironmentErrorSayingSo) {
    TempDir dir;
    const std::string ip = interrupted_ip(dir, 1000);
    try {
        whole_ip_listing({ip, "-4", "-j", "route"});
        FAIL() << "an interrupted listing was taken as whole";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("was interrupted 20 times in a row"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(runs_of(dir), 20);
}

TEST(LabSubnet, AFailingListingIsAnEnvironmentErrorWithWhatIpSaid) {
    TempDir dir;
    const auto script = dir.path() / "ip";
    std::ofstream(script) << "#!/bin/sh\necho 'Cannot open netlink socket' >&2\nexit 1\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    try {
        whole_ip_listing({script.string(), "-4", "-j", "route"});
        FAIL() << "a failed listing was returned";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(
            std::string(e.what()).find("failed in the root namespace: Cannot open netlink socket"),
            std::string::npos)
            << e.what();
    }
}

TEST(LabSubnet, PicksTheFirstSubnetFromTheStartThatNothingOverlaps) {
    const auto in_use = networks_in_use(kRoutes, kAddresses);
    const auto number = [](int a, int b) { return static_cast<std::uint32_t>(a * 256 + b); };
    // Free where it starts: taken as it is.
    EXPECT_EQ(free_lab_subnet(in_use, number(230, 7)), net("10.230.7.0/24"));
    // Inside the unreachable 10.200.0.0/16: the first /24 after it...
    EXPECT_EQ(free_lab_subnet(in_use, number(200, 5)), net("10.201.2.0/24"));
    // ...past a host address (10.201.0.9/32) and a bridge's /23 (10.201.0.0-10.201.1.255).
    EXPECT_EQ(free_lab_subnet(in_use, number(201, 0)), net("10.201.2.0/24"));
    EXPECT_EQ(free_lab_subnet(in_use, number(8, 0)), net("10.8.1.0/24"));
    // From the last /24 on, around to the first.
    auto taken_end = in_use;
    taken_end.push_back(net("10.255.255.0/24"));
    EXPECT_EQ(free_lab_subnet(taken_end, number(255, 255)), net("10.0.0.0/24"));
    // A VPN that routes all of 10.0.0.0/8 leaves the lab nothing.
    EXPECT_EQ(free_lab_subnet({net("10.0.0.0/8")}, 0), std::nullopt);
    EXPECT_EQ(free_lab_subnet({}, 0), net("10.0.0.0/24"));
}

bool interface_exists(const std::string& name) {
    std::ifstream in("/proc/net/dev");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().find(" " + name + ":") != std::string::npos ||
           ss.str().find("\n" + name + ":") != std::string::npos;
}

bool pings(const Endpoint& ep) {
    try {
        return command_once(ep, {"PING"}, 300ms).str == "PONG";
    } catch (const RedisError&) {
        return false;
    }
}

class NetworkLabTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (const std::string why = network_lab_unavailable(); !why.empty())
            GTEST_SKIP() << why;
    }
};

TEST_F(NetworkLabTest, AServerInAHostIsReachedCutOffAndHealedAndNothingIsLeft) {
    std::string root_interface;
    pid_t server_pid = -1;
    {
        NetworkLab lab({"n0", "n1"});
        root_interface = lab.root_interface();
        EXPECT_TRUE(interface_exists(root_interface));
        EXPECT_EQ(lab.address(0).substr(0, 3), "10.");
        RedisServer server(RedisServerOptions{.netns_fd = lab.netns_fd(0), .host = lab.address(0)});
        server_pid = server.pid();
        EXPECT_EQ(server.port(), 6379);  // a host of its own
        const Endpoint ep = server.endpoint();
        EXPECT_TRUE(pings(ep));

        // From another host: a thread moved into n1's namespace.
        bool from_n1 = false;
        std::thread([&] {
            lab.enter(1);
            from_n1 = pings(ep);
        }).join();
        EXPECT_TRUE(from_n1);

        // n0 cut off from the root namespace (where lockbench runs), not from n1.
        lab.partition(isolate_grudge({0}, {NetworkLab::kRoot}));
        EXPECT_FALSE(pings(ep));
        std::thread([&] {
            lab.enter(1);
            from_n1 = pings(ep);
        }).join();
        EXPECT_TRUE(from_n1);
        // And the other way round: the root's grudge is played by n0 (the root's own firewall is
        // never touched).
        lab.partition({{NetworkLab::kRoot, {0}}});
        EXPECT_FALSE(pings(ep));
        lab.heal();
        EXPECT_TRUE(pings(ep));
        lab.partition(isolate_grudge({0}, {NetworkLab::kRoot, 1}));
    }
    EXPECT_FALSE(interface_exists(root_interface));
    EXPECT_NE(::kill(server_pid, 0), 0);
}

TEST_F(NetworkLabTest, PartitionsThatOverlapInTimeBothHoldAndHealSeparately) {
    NetworkLab lab({"n0", "n1", "n2"});
    RedisServer in_n0(RedisServerOptions{.netns_fd = lab.netns_fd(0), .host = lab.address(0)});
    RedisServer in_n1(RedisServerOptions{.netns_fd = lab.netns_fd(1), .host = lab.address(1)});
    const auto pings_from_n2 = [&](const Endpoint& ep) {
        bool reached = false;
        std::thread([&] {
            lab.enter(2);
            reached = pings(ep);
        }).join();
        return reached;
    };
    // Two faults, each cutting one server from n2 (a master from its replica, twice).
    const int first = lab.add_partition(isolate_grudge({0}, {0, 2}));
    const int second = lab.add_partition(isolate_grudge({1}, {1, 2}));
    EXPECT_FALSE(pings_from_n2(in_n0.endpoint()));
    EXPECT_FALSE(pings_from_n2(in_n1.endpoint()));
    EXPECT_TRUE(pings(in_n0.endpoint()));  // the root was cut from neither
    // The first heals; the second's cut stays.
    lab.remove_partition(first);
    EXPECT_TRUE(pings_from_n2(in_n0.endpoint()));
    EXPECT_FALSE(pings_from_n2(in_n1.endpoint()));
    lab.remove_partition(second);
    EXPECT_TRUE(pings_from_n2(in_n1.endpoint()));
    EXPECT_TRUE(lab.grudge().empty());
}

TEST_F(NetworkLabTest, AFailingCommandSaysWhereAndWhat) {
    NetworkLab lab({"n0"});
    try {
        lab.run(0, {"ip", "link", "set", "nosuchdevice", "up"});
        FAIL() << "no error";
    } catch (const EnvironmentError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("ip link set nosuchdevice up failed in host n0"), std::string::npos)
            << what;
    }
}

// ---- lockbench killed in the middle of a partition -------------------------------------------

std::string output_of(const std::string& command) {
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
            out.append(buf, n);
        ::pclose(pipe);
    }
    return out;
}

// Two labs at once, each on a /24 that overlaps nothing this machine routed or held before
// either was made, nor the other lab.
TEST_F(NetworkLabTest, LabsTakeSubnetsNoRouteOrAddressHereOverlaps) {
    const auto before = networks_in_use(output_of("ip -4 -j route show table all"),
                                        output_of("ip -4 -j addr show"));
    ASSERT_FALSE(before.empty());
    NetworkLab first({"n0"});
    NetworkLab second({"n0"});
    const auto subnet_of = [](const NetworkLab& lab) {
        return networks_in_use(R"([{"dst": ")" + lab.subnet() + R"("}])", "[]").at(0);
    };
    EXPECT_FALSE(subnet_of(first).overlaps(subnet_of(second)))
        << first.subnet() << " " << second.subnet();
    for (const Ipv4Network& taken : before) {
        EXPECT_FALSE(subnet_of(first).overlaps(taken))
            << first.subnet() << " " << taken.to_string();
        EXPECT_FALSE(subnet_of(second).overlaps(taken))
            << second.subnet() << " " << taken.to_string();
    }
}

// Every network namespace some process is in, by its inode.
std::set<std::string> namespaces_in_use() {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::error_code ec;
        const auto target = std::filesystem::read_symlink(entry.path() / "ns/net", ec);
        if (!ec)
            out.insert(target.string());
    }
    return out;
}

std::set<std::string> root_interfaces() {
    std::set<std::string> out;
    std::istringstream in(output_of("ip -o link show"));
    for (std::string line; std::getline(in, line);) {
        const auto colon = line.find(": ");
        if (colon == std::string::npos)
            continue;
        auto name = line.substr(colon + 2, line.find(':', colon + 2) - colon - 2);
        out.insert(name.substr(0, name.find('@')));
    }
    return out;
}

// The processes whose parent is `parent`, but for zombies.
std::set<pid_t> children_of(pid_t parent) {
    std::set<pid_t> out;
    for (const auto& child : testing::child_processes(parent)) {
        if (child.state != 'Z')
            out.insert(child.pid);
    }
    return out;
}

std::string netns_of(pid_t pid) {
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec).string();
}

// SIGKILL gives lockbench no chance to clean up: the kernel must. Every namespace dies with the
// holder that PR_SET_PDEATHSIG kills, and its veth ends and iptables rules with it; every server
// in it dies the same way. Nothing of the run may be left: none of its namespaces, no interface
// of its in the root namespace, no rule in the root's firewall, no process it started. This test
// is the run's child subreaper, so whatever it started and outlives it comes to this test.
struct KilledRun {
    const char* workload;
    std::size_t processes;   // at least: namespace holders, servers (and sentinels)
    std::size_t namespaces;  // at least
};
class KilledMidPartitionTest : public NetworkLabTest,
                               public ::testing::WithParamInterface<KilledRun> {};

TEST_P(KilledMidPartitionTest, LockbenchKilledMidPartitionLeavesNothingBehind) {
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    const std::string rules_before = output_of("iptables -S");
    const std::filesystem::path out =
        std::filesystem::temp_directory_path() / ("lockbench-kill-" + std::to_string(::getpid()));
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);

    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::string workload =
            std::string(LOCKBENCH_WORKLOADS_DIR) + "/" + GetParam().workload + ".json";
        ::execl(LOCKBENCH_BINARY, LOCKBENCH_BINARY, "run", workload.c_str(), "--out", out.c_str(),
                "--no-yardstick", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    char hex[16];
    std::snprintf(hex, sizeof hex, "lb%x", static_cast<unsigned>(pid));
    const std::string interface_prefix = hex;

    // Killed once its partition is in place (the run's history says so).
    bool partitioned = false;
    for (auto until = std::chrono::steady_clock::now() + 60s;
         !partitioned && std::chrono::steady_clock::now() < until;) {
        std::this_thread::sleep_for(50ms);
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(out, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            if (it->path().filename() != "history.jsonl")
                continue;
            std::ifstream in(it->path());
            std::stringstream text;
            text << in.rdbuf();
            partitioned |= text.str().find("\"f\":\"partition\"") != std::string::npos;
        }
    }
    ASSERT_TRUE(partitioned) << "the run never partitioned its hosts";
    // What it made: its processes (namespace holders, servers, sentinels), their namespaces,
    // and its interface in the root namespace.
    const std::set<pid_t> started = children_of(pid);
    std::set<std::string> namespaces;
    for (pid_t child : started) {
        if (const std::string ns = netns_of(child); ns != netns_of(::getpid()))
            namespaces.insert(ns);
    }
    std::set<std::string> interfaces;
    for (const auto& name : root_interfaces()) {
        if (name.rfind(interface_prefix, 0) == 0)
            interfaces.insert(name);
    }
    EXPECT_GE(started.size(), GetParam().processes);
    EXPECT_GE(namespaces.size(), GetParam().namespaces);
    EXPECT_EQ(interfaces.size(), 1u);

    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);

    // The kernel tears dead namespaces down in its own time: give it a few seconds.
    std::set<pid_t> processes_left;
    std::set<std::string> namespaces_left, interfaces_left;
    for (auto until = std::chrono::steady_clock::now() + 15s;
         std::chrono::steady_clock::now() < until;) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // orphans that came to us, once dead
        }
        processes_left = children_of(::getpid());
        namespaces_left.clear();
        for (const auto& ns : namespaces_in_use()) {
            if (namespaces.count(ns))
                namespaces_left.insert(ns);
        }
        interfaces_left.clear();
        for (const auto& name : root_interfaces()) {
            if (interfaces.count(name))
                interfaces_left.insert(name);
        }
        if (processes_left.empty() && namespaces_left.empty() && interfaces_left.empty())
            break;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(processes_left.empty())
        << output_of("ps -o pid,ppid,stat,args -p " + std::to_string(*processes_left.begin()));
    EXPECT_TRUE(namespaces_left.empty()) << *namespaces_left.begin();
    EXPECT_TRUE(interfaces_left.empty()) << *interfaces_left.begin();
    EXPECT_EQ(output_of("iptables -S"), rules_before);
    EXPECT_EQ(output_of("ip netns list"), "");
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    std::filesystem::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Topologies, KilledMidPartitionTest,
                         // Sentinel: 4 holders, a bridge's, 3 redis-servers, 3 sentinels. Cluster:
                         // 7 holders, a bridge's, 6 redis-servers.
                         ::testing::Values(KilledRun{"t5-sentinel-split-brain", 10, 4},
                                           KilledRun{"t5-cluster-split-brain", 13, 7}),
                         [](const ::testing::TestParamInfo<KilledRun>& param_info) {
                             std::string name = param_info.param.workload;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// ---- the user's own servers, reached through OpenSSH --------------------------------------------

// A host as a user has one: sshd (Debian's openssh-server) and a redis-server started through it,
// in a network namespace of this machine; lockbench gets only an inventory naming them. Every
// key and config lives in a temp folder; the test stops what it started.
class SshHostTest : public NetworkLabTest {
  protected:
    void SetUp() override {
        NetworkLabTest::SetUp();
        if (IsSkipped())
            return;
        try {
            find_executable("/usr/sbin/sshd");
        } catch (const EnvironmentError&) {
            GTEST_SKIP() << "/usr/sbin/sshd not installed (scripts/bootstrap.sh installs "
                            "openssh-server)";
        }
        lab_ = std::make_unique<NetworkLab>(std::vector<std::string>{"n0"});
        address_ = lab_->address(0);
        char tmpl[] = "/tmp/lockbench-ssh-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        const std::string d = dir_.string();
        ASSERT_EQ(
            std::system(("ssh-keygen -q -t ed25519 -N '' -f " + d + "/host_key && " +
                         "ssh-keygen -q -t ed25519 -N '' -f " + d + "/client_key && " + "cp " + d +
                         "/client_key.pub " + d + "/authorized_keys && " + "mkdir -p /run/sshd")
                            .c_str()),
            0);
        std::ofstream(dir_ / "sshd_config")
            << "Port 22\nListenAddress " << address_ << "\nHostKey " << d << "/host_key\n"
            << "AuthorizedKeysFile " << d << "/authorized_keys\nPermitRootLogin prohibit-password\n"
            << "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            << "StrictModes no\nPidFile " << d << "/sshd.pid\n";
        sshd_ = ::fork();
        ASSERT_GE(sshd_, 0);
        if (sshd_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::setns(lab_->netns_fd(0), CLONE_NEWNET) != 0)
                ::_exit(126);
            const std::string config = d + "/sshd_config";
            const std::string log = d + "/sshd.log";
            ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-f", config.c_str(), "-E",
                    log.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        control_.kind = HostControl::Kind::Ssh;
        control_.ssh_target = "root@" + address_;
        control_.identity = d + "/client_key";
        control_.ssh_options = {"StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null",
                                "LogLevel=ERROR"};
        // sshd is up when a command goes through; then the node is started through it.
        for (auto until = std::chrono::steady_clock::now() + 10s;;) {
            try {
                run_on_host(control_, "true", 5s);
                break;
            } catch (const EnvironmentError& e) {
                if (std::chrono::steady_clock::now() >= until)
                    FAIL() << "sshd never answered: " << e.what();
                std::this_thread::sleep_for(100ms);
            }
        }
        start_command_ = "redis-server --port 6379 --bind " + address_ +
                         " --daemonize yes --save '' --appendonly no --protected-mode no --dir " +
                         d + " --logfile " + d + "/redis.log";
        run_on_host(control_, start_command_);
        node_.name = "r1";
        node_.role = "master";
        node_.endpoint = Endpoint{address_, 6379, ""};
        node_.control = control_;
        node_.restart = start_command_;
        ControlledServer(node_).wait_until_answers(10s);
    }
    void TearDown() override {
        if (!lab_)
            return;
        try {  // the server the test started, and any its restarts left
            ControlledServer server(node_);
            if (server.answers())
                ::kill(static_cast<pid_t>(server.pid()), SIGKILL);
        } catch (const std::exception&) {
        }
        if (sshd_ > 0) {
            ::kill(sshd_, SIGKILL);
            ::waitpid(sshd_, nullptr, 0);
        }
        lab_.reset();
        std::filesystem::remove_all(dir_);
    }
    Inventory inventory() const {
        return Inventory::from_json(json{{"name", "ssh-host"},
                                         {"nodes",
                                          {{{"name", "r1"},
                                            {"role", "master"},
                                            {"host", address_},
                                            {"port", 6379},
                                            {"control",
                                             {{"ssh", control_.ssh_target},
                                              {"identity", control_.identity},
                                              {"options", control_.ssh_options}}},
                                            {"restart", start_command_}}}}},
                                    "inventory.json");
    }

    // The run `name` on the user's deployment: 2 clients for 2 s, `fault` from 0.5 s for 600 ms.
    RunOutcome run_with_fault(const std::string& name, const std::string& fault, TempDir& out) {
        const Workload w = Workload::from_json(json{
            {"name", name},
            {"clients", 2},
            {"keys", 1},
            {"duration_s", 2},
            {"command_timeout_ms", 300},
            {"faults", json::array({{{"fault", fault}, {"at_s", 0.5}, {"duration_ms", 600}}})}});
        return run_workload({.workload = w, .inventory = inventory(), .out_dir = out.path()});
    }
    // How many of the run's operations got no answer (`info`), of every kind.
    static int unanswered(const RunOutcome& r) {
        int infos = 0;
        for (const auto& [op, counts] : r.summary.ops)
            infos += static_cast<int>(counts.info);
        return infos;
    }

    std::unique_ptr<NetworkLab> lab_;
    std::string address_;
    std::filesystem::path dir_;
    pid_t sshd_ = -1;
    HostControl control_;
    std::string start_command_;
    InventoryNode node_;
};

// T4 on the user's server: lockbench kills it through ssh, and the host restarts it by itself (the
// inventory's restart command, left running there when the kill was sent) - without persistence
// every lock is gone, exactly as on an embedded server.
TEST_F(SshHostTest, KillServerThroughSshRestartsTheUsersServerAndBreaksTheLockAsEmbedded) {
    Workload w = Workload::load(std::filesystem::path(LOCKBENCH_WORKLOADS_DIR) /
                                "t4-restart-without-persistence.json");
    w.strategy = "set_nx_px";
    const long long pid_before = ControlledServer(node_).pid();
    TempDir out;
    RunOutcome r = run_workload({.workload = w, .inventory = inventory(), .out_dir = out.path()});
    const nlohmann::json s = r.summary.to_json();
    EXPECT_EQ(s["redis"]["mode"], "external");
    EXPECT_EQ(s["inventory"]["controlled"], json::array({"r1 (ssh root@" + address_ + ")"}));
    ASSERT_EQ(s["nemesis"].size(), 1u);
    EXPECT_EQ(s["nemesis"][0]["took_effect"], 1) << s["nemesis"].dump();
    EXPECT_EQ(s["as_expected"], true) << s["verdict"].dump().substr(0, 2000);
    EXPECT_NE(ControlledServer(node_).pid(), pid_before);  // a new process answers
    std::ifstream history(r.dir / "history.jsonl");
    std::stringstream text;
    text << history.rdbuf();
    EXPECT_NE(text.str().find("\"f\":\"restart-server\""), std::string::npos);
}

// pause-server through ssh: SIGSTOP and SIGCONT on the user's host.
TEST_F(SshHostTest, PauseServerThroughSshStopsAndResumesTheUsersServer) {
    TempDir out;
    const RunOutcome r = run_with_fault("pause-over-ssh", "pause-server", out);
    ASSERT_EQ(r.summary.nemesis.size(), 1u);
    EXPECT_EQ(r.summary.nemesis[0].took_effect, 1) << r.summary.nemesis[0].to_json().dump();
    // Commands sent while it was stopped timed out: the pause acted on the real process.
    EXPECT_GT(unanswered(r), 0) << r.summary.to_json()["ops"].dump();
    EXPECT_TRUE(ControlledServer(node_).answers());
}

// A lockbench that dies in the middle of a pause leaves no server stopped: the host sends the
// SIGCONT itself, a margin after the pause was to end.
TEST_F(SshHostTest, TheHostResumesAPausedServerWhenLockbenchNeverDoes) {
    ControlledServer server(node_);
    const auto paused = std::chrono::steady_clock::now();
    server.pause(300ms);  // and never resume()
    EXPECT_FALSE(server.answers());
    server.wait_until_answers(10s);
    // By the host, a 2 s margin after the pause was to end: not before.
    EXPECT_GE(std::chrono::steady_clock::now() - paused, 2200ms);
}

// isolate-node through ssh: iptables on the user's host cuts the node off (clients time out), and
// the rule is gone afterwards - deleted by lockbench, and by the host itself when lockbench never
// does.
TEST_F(SshHostTest, IsolateNodeThroughSshCutsTheNodeOffAndTheRuleGoesAway) {
    TempDir out;
    const RunOutcome r = run_with_fault("isolate-over-ssh", "isolate-node", out);
    ASSERT_EQ(r.summary.nemesis.size(), 1u);
    EXPECT_EQ(r.summary.nemesis[0].took_effect, 1) << r.summary.nemesis[0].to_json().dump();
    EXPECT_GT(unanswered(r), 0)
        << r.summary.to_json()["ops"].dump();  // sent meanwhile, got no answer
    const std::string rule = "-A INPUT -p tcp -m tcp --dport 6379 -m comment --comment lockbench-";
    EXPECT_EQ(run_on_host(control_, "iptables -S INPUT").find(rule), std::string::npos);

    ControlledServer server(node_);
    server.isolate(200ms);  // and never end_isolation()
    EXPECT_NE(run_on_host(control_, "iptables -S INPUT").find(rule), std::string::npos);
    EXPECT_FALSE(server.answers());
    server.wait_until_answers(10s);  // the host deleted it, a margin after the 200 ms
    EXPECT_EQ(run_on_host(control_, "iptables -S INPUT").find(rule), std::string::npos);
}

// A suite on the user's deployment: what can run there runs (T4's kill through ssh), what needs
// servers of lockbench's own is skipped, saying why.
TEST_F(SshHostTest, ASuiteOnAnInventoryRunsWhatItCanAndSkipsTheRestSayingWhy) {
    TempDir out;
    SuiteOutcome outcome =
        run_suite({.scenarios_dir = LOCKBENCH_WORKLOADS_DIR,
                   .out_dir = out.path(),
                   .strategies = {"set_nx_px"},
                   .scenarios = {"t4-restart-without-persistence", "t5-failover"},
                   .yardstick = false,
                   .inventory = inventory()});
    const json table = outcome.table.to_json();
    ASSERT_EQ(table["runs"].size(), 1u) << table.dump();
    EXPECT_EQ(table["runs"][0]["scenario"], "t4-restart-without-persistence");
    EXPECT_EQ(table["runs"][0]["as_expected"], true);
    ASSERT_EQ(table["skipped"].size(), 1u);
    EXPECT_EQ(table["skipped"][0]["scenario"], "t5-failover");
    EXPECT_EQ(table["skipped"][0]["reason"],
              "topology: 'replicated' starts servers of its own; --inventory names servers that "
              "are already there");
    EXPECT_TRUE(outcome.all_as_expected);
}

// Faults the inventory cannot act on are refused before anything starts, naming why.
TEST_F(SshHostTest, AProcessFaultOnANodeWithoutControlIsRefusedUpFront) {
    json j = json{{"name", "no-control"},
                  {"nodes", {{{"name", "r1"}, {"host", address_}, {"port", 6379}}}}};
    const Inventory bare = Inventory::from_json(j, "bare.json");
    Workload w = Workload::from_json(json::parse(R"({"name": "w", "duration_s": 1,
        "faults": [{"fault": "kill-server", "at_s": 0.5}]})"));
    TempDir out;
    try {
        run_workload({.workload = w, .inventory = bare, .out_dir = out.path()});
        FAIL() << "ran";
    } catch (const WorkloadError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "faults: 'kill-server' acts on node r1's process, and bare.json gives no control "
                  "for its host (\"control\": {\"ssh\": \"user@host\"} or {\"local\": true})");
    }
    Workload jump = Workload::from_json(json::parse(R"({"name": "w", "duration_s": 1,
        "faults": [{"fault": "clock-jump", "at_s": 0.5}]})"));
    try {
        run_workload({.workload = jump, .inventory = inventory(), .out_dir = out.path()});
        FAIL() << "ran";
    } catch (const WorkloadError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "faults: 'clock-jump' acts on a server process and needs embedded servers, not "
                  "--inventory");
    }
    EXPECT_TRUE(std::filesystem::is_empty(out.path()));
}

}  // namespace
}  // namespace lockbench
