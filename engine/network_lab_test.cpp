// Hosts in network namespaces: Jepsen's partition shapes as grudges, and a real lab - a
// redis-server inside a host, reached from the root namespace and from another host, cut off
// by iptables and healed, and nothing left behind when the lab goes. The lab needs root: without
// it these tests are skipped, saying why.

#include "network_lab.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>

#include <gtest/gtest.h>

#include "event_loop.hpp"
#include "redis_connection.hpp"
#include "redis_server.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using Grudge = NetworkLab::Grudge;

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

bool interface_exists(const std::string& name) {
    std::ifstream in("/proc/net/dev");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().find(" " + name + ":") != std::string::npos ||
           ss.str().find("\n" + name + ":") != std::string::npos;
}

bool pings(const Endpoint& ep) {
    EventLoop loop;
    RedisConnection c(loop, ep, {.connect_timeout = 300ms, .command_timeout = 300ms});
    try {
        return run_sync(loop, [](RedisConnection& conn) -> Task<bool> {
            co_return (co_await conn.command("PING")).str == "PONG";
        }(c));
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

// The processes whose parent is `parent`.
std::set<pid_t> children_of(pid_t parent) {
    std::set<pid_t> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        std::getline(stat, text);
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
        const auto close = text.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(text.substr(close + 2));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent && state != 'Z')
            out.insert(std::stoi(name));
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
TEST_F(NetworkLabTest, LockbenchKilledMidPartitionLeavesNothingBehind) {
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
            std::string(LOCKBENCH_WORKLOADS_DIR) + "/t5-sentinel-split-brain.json";
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
    EXPECT_GE(started.size(), 10u);  // 4 holders, a bridge's, 3 redis-servers, 3 sentinels
    EXPECT_GE(namespaces.size(), 4u);
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

}  // namespace
}  // namespace lockbench
