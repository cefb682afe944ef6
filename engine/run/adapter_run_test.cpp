// `lockbench run` with lock libraries behind adapter processes (strategies/adapters/PROTOCOL.md):
// the null adapter end to end (the resource written by lockbench), most clients' adapters lost
// making the run unknown, each process fault proven on the adapter process, and no adapter
// process left after Ctrl-C.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/run/run.hpp"
#include "engine/servers/zookeeper_server.hpp"
#include "engine/testing/child_processes.hpp"
#include "engine/testing/redis_fixture.hpp"
#include "engine/testing/run_files.hpp"
#include "strategies/external/adapter_process.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;
using testing::read_history;
using testing::TempDir;

const fs::path kSource = LOCKBENCH_TEST_SOURCE_DIR;

// The command line of the test adapter that misbehaves as `how` says (its docstring lists how).
std::string misbehaving_adapter(const std::string& how) {
    return "/usr/bin/python3 " +
           (kSource / "strategies/external/testing/misbehaving_adapter.py").string() + " " + how;
}

// The workload `name`: `clients` clients of the misbehaving adapter in mode `how` on 2 keys for
// half a second, with the `changes` a test's case needs.
Workload misbehaving_workload(const std::string& name, const std::string& how, int clients,
                              const json& changes = json::object()) {
    json spec{{"name", name},
              {"client_command", misbehaving_adapter(how)},
              {"clients", clients},
              {"keys", 2},
              {"duration_s", 0.5}};
    spec.update(changes);
    return Workload::from_json(spec);
}

// One client of the misbehaving adapter in mode `how` for half a second, its stderr captured: the
// signals a library sends unasked belong in the history, never on stderr.
struct QuietRun {
    RunOutcome outcome;
    std::string stderr_text;
};
QuietRun run_misbehaving(const std::string& name, const std::string& how, int keys,
                         const std::filesystem::path& out_dir) {
    const Workload w = misbehaving_workload(name, how, 1, {{"keys", keys}});
    ::testing::internal::CaptureStderr();
    RunOutcome r = run_workload({.workload = w, .out_dir = out_dir});
    return {std::move(r), ::testing::internal::GetCapturedStderr()};
}

std::vector<json> nemesis_events(const std::vector<json>& events, const std::string& f) {
    std::vector<json> out;
    for (const auto& e : events) {
        if (e["process"] == "nemesis" && e["f"] == f)
            out.push_back(e);
    }
    return out;
}

// How many of the run's history events are `type` events of `f`.
std::size_t count_events(const RunOutcome& r, const std::string& f, const std::string& type) {
    std::size_t n = 0;
    for (const auto& e : read_history(r.dir / "history.jsonl"))
        n += e["f"] == f && e["type"] == type;
    return n;
}

// The run's verdict is unknown, and its reasons say its 2 clients lost their adapter process.
::testing::AssertionResult unknown_as_both_clients_lost(const RunOutcome& r) {
    const std::string reasons = r.summary.to_json()["verdict"]["unknown_reasons"].dump();
    if (r.summary.to_json()["verdict"]["valid"] != "unknown" ||
        reasons.find("2 of 2 clients lost their adapter process") == std::string::npos)
        return ::testing::AssertionFailure() << r.summary.to_json()["verdict"].dump(2);
    return ::testing::AssertionSuccess();
}

// The run's notes say that `fault` of client 0's adapter process, `pid`, hit both clients packed
// into it.
::testing::AssertionResult notes_say_both_packed_clients_were_hit(const RunOutcome& r,
                                                                  const std::string& fault,
                                                                  pid_t pid) {
    const std::string notes = r.summary.to_json()["notes"].dump();
    if (notes.find(fault + " of client 0's adapter process (pid " + std::to_string(pid) +
                   ") hit 2 clients (0, 1)") == std::string::npos)
        return ::testing::AssertionFailure() << notes;
    return ::testing::AssertionSuccess();
}

// The processes whose parent is `parent` and whose command line mentions `needle`.
std::vector<pid_t> children_running(pid_t parent, const std::string& needle) {
    std::vector<pid_t> out;
    for (const auto& child : testing::child_processes(parent)) {
        if (child.cmdline.find(needle) != std::string::npos)
            out.push_back(child.pid);
    }
    return out;
}

TEST(AdapterRunTest, NullAdapterRunsEndToEndWithTheResourceWrittenByLockbench) {
    TempDir out;
    Workload w = Workload::from_json(json::parse(R"({
        "name": "null", "strategy": "null-adapter", "clients": 1, "keys": 2, "duration_s": 0.5
    })"));
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    EXPECT_EQ(r.summary.to_json()["adapter"]["library"], "in-memory");
    EXPECT_EQ(r.summary.to_json()["adapter"]["version"], "1.0");
    EXPECT_EQ(r.summary.to_json()["adapter"]["clients_lost"], 0);
    const std::size_t writes = count_events(r, "write", "ok");
    EXPECT_GT(writes, 0u);
    EXPECT_EQ(r.summary.to_json()["ops"]["write"]["ok"], writes);
    std::vector<fs::path> logs(fs::directory_iterator(r.dir / "adapters"), {});
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_TRUE(logs[0].filename().string().starts_with("c0-"));
    EXPECT_TRUE(children_running(::getpid(), "minimal_adapter.py").empty());
}

TEST(AdapterRunTest, MostClientsLosingTheirAdapterMakeTheRunUnknown) {
    TempDir out;
    Workload w = misbehaving_workload("garbage", "garbage 1", 2);
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_TRUE(unknown_as_both_clients_lost(r));
    const std::string reasons = r.summary.to_json()["verdict"]["unknown_reasons"].dump();
    EXPECT_NE(reasons.find("answered a line that is not a JSON object"), std::string::npos)
        << reasons;
    // Every acquire met garbage: in doubt, never a grant, so no violation can hide the reason.
    EXPECT_GE(count_events(r, "acquire", "info"), 2u);
    EXPECT_EQ(run_exit_code(r), 3);
    EXPECT_TRUE(children_running(::getpid(), "misbehaving_adapter.py").empty());
}

// PROTOCOL.md: an adapter that cannot take the run's servers refuses init as `unsupported`, and
// the run stops at once with that line, the adapter's own words (it retried to the connect
// deadline, 10 s, for an answer no retry changes).
TEST(AdapterRunTest, AnAdaptersRefusedInitStopsTheRunAtOnceWithItsWords) {
    TempDir out;
    Workload w = misbehaving_workload("refused-init", "init-unsupported", 2);
    const auto started = std::chrono::steady_clock::now();
    try {
        run_workload({.workload = w, .out_dir = out.path()});
        ADD_FAILURE() << "the run started although no adapter took its init";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "the adapter (" + misbehaving_adapter("init-unsupported") +
                      ") refused its init: unsupported: test: this server is not supported");
    }
    // At the first refusal, not at the connect deadline (10 s): no retry changes a definite one.
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    EXPECT_TRUE(children_running(::getpid(), "misbehaving_adapter.py").empty());
}

TEST(AdapterRunTest, ProcessFaultsAreProvenOnTheAdapterProcess) {
    TempDir out;
    Workload w = Workload::from_json(json::parse(R"({
        "name": "faults", "strategy": "null-adapter", "clients": 2, "keys": 2, "duration_s": 1,
        "faults": [
            {"fault": "pause-client", "target": "client:0", "at_s": 0.1, "duration_ms": 200,
             "scope": "client", "point": "any"},
            {"fault": "crash-client", "target": "client:0", "at_s": 0.5},
            {"fault": "clock-skew", "target": "client:1", "at_s": 0.1, "offset_ms": 5000}
        ]
    })"));
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    const auto events = read_history(r.dir / "history.jsonl");
    const auto pauses = nemesis_events(events, "pause");
    ASSERT_EQ(pauses.size(), 1u) << r.summary.to_json()["nemesis"].dump(2);
    EXPECT_EQ(pauses[0]["value"]["proof"]["state"], "T");
    const auto crashes = nemesis_events(events, "crash");
    ASSERT_GE(crashes.size(), 1u) << r.summary.to_json()["nemesis"].dump(2);
    EXPECT_EQ(crashes[0]["value"]["proof"]["reaped"], true);
    const pid_t crashed_pid = crashes[0]["value"]["proof"]["pid"];
    EXPECT_FALSE(process_state(crashed_pid).has_value());
    const auto clocks = nemesis_events(events, "clock");
    ASSERT_EQ(clocks.size(), 1u) << r.summary.to_json()["nemesis"].dump(2);
    const auto& proof = clocks[0]["value"]["proof"];
    EXPECT_NEAR(proof["adapter_unix_ms"].get<double>() - proof["lockbench_unix_ms"].get<double>(),
                5000.0, 200.0);
    EXPECT_EQ(r.summary.to_json()["verdict"]["unknown_reasons"].dump().find("fault"),
              std::string::npos)
        << r.summary.to_json()["verdict"].dump(2);
    EXPECT_TRUE(children_running(::getpid(), "minimal_adapter.py").empty());
}

TEST(AdapterRunTest, ALibrarysLostSignalIsRecordedInTheHistoryNotOnStderr) {
    TempDir out;
    // Grants every acquire, then says at once that the grant was lost.
    const auto [r, stderr_text] = run_misbehaving("lost", "lost 1", 2, out.path());
    EXPECT_EQ(stderr_text.find("lost"), std::string::npos) << stderr_text;
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);

    const auto events = read_history(r.dir / "history.jsonl");
    std::map<std::string, json> grants;  // token -> its acquire's ok
    std::size_t signals = 0;
    for (const auto& e : events) {
        if (e["f"] == "acquire" && e["type"] == "ok")
            grants[e["value"]["token"]] = e;
        if (e["process"] != "library")
            continue;
        ++signals;
        EXPECT_EQ(e["type"], "info");
        EXPECT_EQ(e["f"], "lost");
        EXPECT_EQ(e["value"]["text"], "test: the lock was lost");
        // The grant it names was recorded just before it, by the process it names, on its key
        // as the history names it.
        const auto grant = grants.find(e["value"]["token"].get<std::string>());
        ASSERT_NE(grant, grants.end()) << e.dump();
        EXPECT_EQ(e["value"]["process"], grant->second["process"]) << e.dump();
        EXPECT_EQ(e["key"], grant->second["key"]) << e.dump();
        EXPECT_GE(e["time"].get<std::int64_t>(), grant->second["time"].get<std::int64_t>());
    }
    EXPECT_GT(signals, 0u);
    EXPECT_EQ(r.summary.to_json()["adapter"]["lost_signals"], signals);
    std::ifstream story_file(r.dir / "story.txt");
    const std::string story((std::istreambuf_iterator<char>(story_file)), {});
    EXPECT_NE(story.find("misbehaving-lost told process 0 it lost k"), std::string::npos) << story;
}

// PROTOCOL.md `late_grant`: the library granted an acquire its adapter had answered `timeout`,
// and the adapter released it. Both phases are history events naming the in-doubt acquire's
// process, in order and after its `info`; the linearizability check places them.
TEST(AdapterRunTest, ALateGrantAndItsReleaseAreRecordedForTheInDoubtAcquire) {
    TempDir out;
    // The 2nd acquire is answered `timeout`, then granted late and released; the rest granted.
    const auto [r, stderr_text] = run_misbehaving("late-grant", "late-grant 2", 1, out.path());
    EXPECT_EQ(stderr_text.find("late_grant"), std::string::npos) << stderr_text;
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["linearizability"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);

    const auto events = read_history(r.dir / "history.jsonl");
    std::vector<json> in_doubt;  // the acquires answered `info`
    std::vector<json> late;
    for (const auto& e : events) {
        if (e["f"] == "acquire" && e["type"] == "info")
            in_doubt.push_back(e);
        if (e["process"] == "library") {
            EXPECT_EQ(e["type"], "info") << e.dump();
            EXPECT_EQ(e["f"], "late-grant") << e.dump();
            late.push_back(e);
        }
    }
    ASSERT_EQ(in_doubt.size(), 1u);
    ASSERT_EQ(late.size(), 2u);
    EXPECT_EQ(late[0]["value"]["phase"], "granted");
    EXPECT_EQ(late[0]["value"]["token"], "late-2");
    EXPECT_EQ(late[1]["value"]["phase"], "released");
    EXPECT_EQ(late[1]["value"]["ok"], true);
    for (const auto& e : late) {
        EXPECT_EQ(e["value"]["process"], in_doubt[0]["process"]) << e.dump();
        EXPECT_EQ(e["key"], in_doubt[0]["key"]) << e.dump();
        EXPECT_GT(e["index"].get<std::int64_t>(), in_doubt[0]["index"].get<std::int64_t>());
        EXPECT_GE(e["time"].get<std::int64_t>(), in_doubt[0]["time"].get<std::int64_t>());
    }
    EXPECT_GT(late[1]["index"].get<std::int64_t>(), late[0]["index"].get<std::int64_t>());
    EXPECT_EQ(r.summary.to_json()["adapter"]["late_grants"], 1);
    // Released at once, the late grant held nothing up; the story says what the library did.
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["liveness"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    std::ifstream story_file(r.dir / "story.txt");
    // Its sentences wrap: read it one word at a time.
    std::string story;
    for (std::string word; story_file >> word;)
        story += " " + word;
    EXPECT_NE(story.find(" granted process " + in_doubt[0]["process"].dump() + "'s acquire of " +
                         in_doubt[0]["key"].get<std::string>() + ", answered in doubt at "),
              std::string::npos)
        << story;
    EXPECT_NE(story.find(", and its adapter released it at "), std::string::npos) << story;
}

// PROTOCOL.md `late_grant`'s `id`: with two acquires of one client on one key in doubt, the
// late grant of the second, named by its request's id, is recorded for that second acquire's
// process, not for the oldest in doubt.
TEST(AdapterRunTest, ALateGrantNamingItsRequestIsRecordedForThatAcquire) {
    TempDir out;
    // The 2nd and 3rd acquires are answered `timeout`; the 3rd is then granted late and released.
    const auto [r, stderr_text] =
        run_misbehaving("late-grant-second", "late-grant-second 2", 1, out.path());
    EXPECT_EQ(stderr_text.find("late_grant"), std::string::npos) << stderr_text;
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["linearizability"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);

    std::vector<json> in_doubt;
    std::vector<json> late;
    for (const auto& e : read_history(r.dir / "history.jsonl")) {
        if (e["f"] == "acquire" && e["type"] == "info")
            in_doubt.push_back(e);
        if (e["process"] == "library")
            late.push_back(e);
    }
    ASSERT_EQ(in_doubt.size(), 2u);
    ASSERT_NE(in_doubt[0]["process"], in_doubt[1]["process"]);
    ASSERT_EQ(late.size(), 2u);
    EXPECT_EQ(late[0]["value"]["phase"], "granted");
    EXPECT_EQ(late[0]["value"]["token"], "late-3");
    EXPECT_EQ(late[1]["value"]["phase"], "released");
    for (const auto& e : late) {
        EXPECT_EQ(e["f"], "late-grant") << e.dump();
        EXPECT_EQ(e["value"]["process"], in_doubt[1]["process"]) << e.dump();
        EXPECT_EQ(e["key"], in_doubt[1]["key"]) << e.dump();
        EXPECT_GT(e["index"].get<std::int64_t>(), in_doubt[1]["index"].get<std::int64_t>());
    }
    EXPECT_EQ(r.summary.to_json()["adapter"]["late_grants"], 1);
}

// PROTOCOL.md `late_grant` phase `abandoned`: the library gave up an acquire its adapter had
// answered `timeout`, and whatever it held is gone. One history event naming the in-doubt
// acquire's process, after its `info`; no late grant is counted, and the checks stay valid.
TEST(AdapterRunTest, AnAbandonedAcquireIsRecordedForTheInDoubtAcquire) {
    TempDir out;
    const auto [r, stderr_text] = run_misbehaving("abandoned", "abandoned 2", 1, out.path());
    EXPECT_EQ(stderr_text.find("late_grant"), std::string::npos) << stderr_text;
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["linearizability"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    std::vector<json> in_doubt;
    std::vector<json> library;
    for (const auto& e : read_history(r.dir / "history.jsonl")) {
        if (e["f"] == "acquire" && e["type"] == "info")
            in_doubt.push_back(e);
        if (e["process"] == "library")
            library.push_back(e);
    }
    ASSERT_EQ(in_doubt.size(), 1u);
    ASSERT_EQ(library.size(), 1u);
    EXPECT_EQ(library[0]["type"], "info");
    EXPECT_EQ(library[0]["f"], "late-grant");
    EXPECT_EQ(library[0]["value"],
              (json{{"process", in_doubt[0]["process"]}, {"phase", "abandoned"}}))
        << library[0].dump();
    EXPECT_EQ(library[0]["key"], in_doubt[0]["key"]);
    EXPECT_GT(library[0]["index"].get<std::int64_t>(), in_doubt[0]["index"].get<std::int64_t>());
    EXPECT_EQ(r.summary.to_json()["adapter"]["late_grants"], 0);
}

// PROTOCOL.md: an acquire_ok's lease_ms is the lease that grant got (etcd rounds 300 ms up to
// 2 s); the history's acquire ok carries it beside the invoke's asked lease, for the checks.
TEST(AdapterRunTest, TheLeaseAnAdapterAppliedToAGrantIsInItsAcquireOk) {
    TempDir out;
    Workload w = misbehaving_workload("grant-lease", "grant-lease 1", 1, {{"lease_ms", 300}});
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    std::size_t invokes = 0, grants = 0;
    for (const auto& e : read_history(r.dir / "history.jsonl")) {
        if (e["f"] != "acquire")
            continue;
        if (e["type"] == "invoke") {
            ++invokes;
            EXPECT_EQ(e["value"]["lease_ms"], 300) << e.dump();
        } else if (e["type"] == "ok") {
            ++grants;
            EXPECT_EQ(e["value"]["lease_ms"], 2000) << e.dump();
        }
    }
    EXPECT_GT(grants, 0u);
    EXPECT_GE(invokes, grants);
    EXPECT_TRUE(children_running(::getpid(), "misbehaving_adapter.py").empty());
}

// What the library itself wrote on the user's server goes when the run ends: no key of the run
// is left, and the clean-up counts them.
TEST(AdapterRunTest, ALibrarysKeysOnTheUsersRedisAreCleanedUp) {
    TempDir out;
    RedisServer users;
    users.command({"SET", "theirs", "1"});
    Workload w = Workload::from_json(json::parse(R"({
        "name": "cleanup", "strategy": "redis-py", "clients": 2, "keys": 2, "duration_s": 0.5
    })"));
    RunOutcome r =
        run_workload({.workload = w, .redis = {users.endpoint()}, .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    EXPECT_GT(r.summary.to_json()["ops"]["acquire"]["ok"].get<int>(), 0);
    const json cleanup = r.summary.to_json()["cleanup"];
    ASSERT_EQ(cleanup["redis"].size(), 1u) << cleanup.dump();
    EXPECT_GT(cleanup["redis"][0]["deleted"].get<long long>(), 0) << cleanup.dump();
    EXPECT_EQ(cleanup["left"], json::array());
    EXPECT_EQ(users.command({"DBSIZE"}).integer, 1);
    EXPECT_EQ(users.command({"GET", "theirs"}).str, "1");
}

// kazoo's clients (a library whose adapter opens its own ZooKeeper sessions) on the user's
// ZooKeeper, `users_`.
class KazooOnTheUsersZooKeeperTest : public ::testing::Test {
  protected:
    // The run of the workload `name`, which got locks.
    RunOutcome run_kazoo(const std::string& name, int clients, int keys, double duration_s) {
        const Workload w = Workload::from_json(json{{"name", name},
                                                    {"strategy", "kazoo"},
                                                    {"clients", clients},
                                                    {"keys", keys},
                                                    {"duration_s", duration_s}});
        RunOutcome r =
            run_workload({.workload = w, .zookeeper = users_.hosts(), .out_dir = out_.path()});
        EXPECT_GT(r.summary.to_json()["ops"]["acquire"]["ok"].get<int>(), 0)
            << r.summary.to_json().dump(2);
        return r;
    }

    ZooKeeperServer users_;

  private:
    TempDir out_;
};

// kazoo keeps its lock nodes under /<namespace>: on the user's ZooKeeper they go too.
TEST_F(KazooOnTheUsersZooKeeperTest, ALibrarysZnodesOnTheUsersZooKeeperAreCleanedUp) {
    RunOutcome r = run_kazoo("cleanup", 2, 2, 1);
    const json cleanup = r.summary.to_json()["cleanup"];
    ASSERT_TRUE(cleanup.contains("zookeeper")) << cleanup.dump();
    // At least /<namespace>, a key's node under it, and that node's lock node parent.
    EXPECT_GE(cleanup["zookeeper"]["deleted"].get<long long>(), 3) << cleanup.dump();
    EXPECT_EQ(cleanup["left"], json::array());
    // Only ZooKeeper's own node is left at the root (asked with kazoo, as a user would).
    const std::string ask =
        "/usr/bin/python3 -c \"from kazoo.client import KazooClient; "
        "z = KazooClient('" +
        users_.hosts() + "'); z.start(10); print(sorted(z.get_children('/'))); z.stop()\"";
    std::FILE* pipe = ::popen(ask.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string listing;
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe))
        listing += buffer;
    ASSERT_EQ(::pclose(pipe), 0) << listing;
    EXPECT_EQ(listing, "['zookeeper']\n");
}

// A library's client is its adapter process, which opens its own ZooKeeper session: lockbench
// opens none beside it (one per client, idle, that the server would keep alive for nothing).
TEST_F(KazooOnTheUsersZooKeeperTest, OnlyTheAdaptersOpenZooKeeperSessions) {
    // The most connections the server had at once, its `srvr` probe's own among them.
    std::atomic<bool> done{false};
    std::atomic<int> most{0};
    std::thread watcher([&] {
        while (!done) {
            const std::string srvr = users_.four_letter_word("srvr");
            if (const auto at = srvr.find("Connections: "); at != std::string::npos)
                most = std::max(most.load(), std::atoi(srvr.c_str() + at + 13));
            std::this_thread::sleep_for(10ms);
        }
    });
    run_kazoo("sessions", 3, 1, 1.5);
    done = true;
    watcher.join();
    // Three kazoo sessions and the probe; lockbench's clean-up session may overlap the last.
    EXPECT_GE(most.load(), 4);
    EXPECT_LE(most.load(), 5);
}

// The one file named `name` under `dir`, at any depth (a run writes into a folder of its own).
fs::path find_file(const fs::path& dir, const std::string& name) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.path().filename() == name)
            return entry.path();
    }
    return {};
}

// `lockbench ARGS` with its stdout dropped: its exit code and what it wrote on stderr.
std::pair<int, std::string> run_lockbench(const std::string& args) {
    const std::string command = std::string(LOCKBENCH_BINARY) + " " + args + " 2>&1 >/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string said;
    char chunk[512];
    while (std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe))
        said.append(chunk, n);
    const int status = ::pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, said};
}

// --clients-per-process 2: four clients of a library whose adapter answers concurrently run in
// two adapter processes, each serving two clients that all get their locks.
TEST(AdapterRunTest, PackedClientsShareTheirAdapterProcess) {
    TempDir out;
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execl(LOCKBENCH_BINARY, LOCKBENCH_BINARY, "run", "--no-yardstick", "--strategy",
                "redis-semaphore", "--clients", "4", "--clients-per-process", "2", "--keys", "4",
                "--duration", "2", "--out", out.path().c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Every adapter process the run ever had, sampled until it ends.
    std::set<pid_t> adapters;
    std::size_t most_at_once = 0;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        auto now = children_running(pid, "redis_semaphore_adapter.js");
        // The clients' processes log into the run's adapters/; the probe that asked the library
        // what it is before the run (one more process, gone when the run starts) does not.
        std::erase_if(now, [](pid_t adapter) {
            std::error_code gone;
            const fs::path log =
                fs::read_symlink("/proc/" + std::to_string(adapter) + "/fd/2", gone);
            return gone || log.string().find("/adapters/") == std::string::npos;
        });
        adapters.insert(now.begin(), now.end());
        most_at_once = std::max(most_at_once, now.size());
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(adapters.size(), 2u);
    EXPECT_EQ(most_at_once, 2u);
    const fs::path summary_file = find_file(out.path(), "summary.json");
    ASSERT_FALSE(summary_file.empty());
    const json summary = json::parse(std::ifstream(summary_file));
    EXPECT_EQ(summary["adapter"]["clients_per_process"], 2);
    EXPECT_EQ(summary["fairness"]["clients"], 4);
    EXPECT_GT(summary["fairness"]["cycles_min"].get<int>(), 0) << summary["fairness"].dump();
    EXPECT_EQ(summary["verdict"]["valid"], true) << summary["verdict"].dump(2);
    // Each process's init named both its clients; every client's requests went to its own.
    std::set<std::string> acting;
    for (const auto& e : read_history(summary_file.parent_path() / "history.jsonl")) {
        if (e["f"] == "acquire" && e["type"] == "ok")
            acting.insert(std::to_string(e["process"].get<std::int64_t>()));
    }
    EXPECT_GE(acting.size(), 4u);
}

// Two clients of the redis-semaphore library (whose adapter answers concurrently) packed into
// one adapter process on 2 keys, under the faults each test names: however the fault hit the
// pack, no adapter process outlives the run.
class PackedAdapterRunTest : public ::testing::Test {
  protected:
    // The run of the workload `name` with the `changes` (duration, hold, faults) a test needs.
    RunOutcome run_packed(const std::string& name, const json& changes) {
        json spec{{"name", name},
                  {"strategy", "redis-semaphore"},
                  {"clients", 2},
                  {"clients_per_process", 2},
                  {"keys", 2}};
        spec.update(changes);
        return run_workload({.workload = Workload::from_json(spec), .out_dir = out_.path()});
    }
    void TearDown() override {
        EXPECT_TRUE(children_running(::getpid(), "redis_semaphore_adapter.js").empty());
    }

  private:
    TempDir out_;
};

// A crash of a packed process kills every client in it: a crash event for each (the same
// proof), one new process for both, and the run's notes say how many clients the fault hit.
TEST_F(PackedAdapterRunTest, ACrashOfAPackedProcessHitsEachOfItsClients) {
    RunOutcome r = run_packed("packed-crash", json::parse(R"({
        "duration_s": 1.5, "hold_ms": 20,
        "faults": [{"fault": "crash-client", "target": "client:0", "at_s": 0.5}]
    })"));
    const auto events = read_history(r.dir / "history.jsonl");
    const auto crashes = nemesis_events(events, "crash");
    std::set<int> clients_hit;
    std::set<pid_t> pids;
    for (const auto& crash : crashes) {
        clients_hit.insert(crash["value"]["client"].get<int>());
        pids.insert(crash["value"]["proof"]["pid"].get<pid_t>());
        EXPECT_EQ(crash["value"]["proof"]["reaped"], true);
    }
    EXPECT_EQ(clients_hit, (std::set<int>{0, 1})) << r.summary.to_json()["nemesis"].dump(2);
    ASSERT_EQ(pids.size(), 1u);
    EXPECT_FALSE(process_state(*pids.begin()).has_value());
    // Every op in flight when the process died is in doubt: nothing after the crash completes
    // for a process id the crash named.
    std::set<std::int64_t> dead;
    for (const auto& crash : crashes)
        dead.insert(crash["value"]["target"].get<std::int64_t>());
    bool after = false;
    for (const auto& e : events) {
        if (e["process"] == "nemesis" && e["f"] == "crash") {
            after = true;
        } else if (after && e["process"].is_number_integer()) {
            EXPECT_FALSE(dead.count(e["process"].get<std::int64_t>())) << e.dump();
        }
    }
    // The first process and the one successor both clients share, each with its log.
    std::vector<fs::path> logs(fs::directory_iterator(r.dir / "adapters"), {});
    EXPECT_EQ(logs.size(), 2u);
    EXPECT_EQ(r.summary.to_json()["adapter"]["clients_lost"], 0);
    EXPECT_TRUE(notes_say_both_packed_clients_were_hit(r, "crash-client", *pids.begin()));
    EXPECT_NE(r.summary.to_json()["verdict"]["valid"], false)
        << r.summary.to_json()["verdict"].dump(2);
}

// A pause of a packed process stops every client in it: the one pause event, proven on the
// process, names the client packed beside the target, and the notes say the fault hit both.
TEST_F(PackedAdapterRunTest, APauseOfAPackedProcessHitsEachOfItsClients) {
    RunOutcome r = run_packed("packed-pause", json::parse(R"({
        "duration_s": 1,
        "faults": [{"fault": "pause-client", "target": "client:0", "at_s": 0.3,
                    "duration_ms": 200, "scope": "client", "point": "any"}]
    })"));
    const auto pauses = nemesis_events(read_history(r.dir / "history.jsonl"), "pause");
    ASSERT_EQ(pauses.size(), 1u) << r.summary.to_json()["nemesis"].dump(2);
    EXPECT_EQ(pauses[0]["value"]["proof"]["state"], "T");
    EXPECT_EQ(pauses[0]["value"]["packed_clients"], json::array({1}));
    EXPECT_TRUE(notes_say_both_packed_clients_were_hit(
        r, "pause-client", pauses[0]["value"]["proof"]["pid"].get<pid_t>()));
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
}

// A clock skew of a packed process skews every client in it: the one clock event, proven by the
// process's own `time` (the offset, then the drift 300 ms later), and the notes say the fault hit
// both. A crash of the other client afterwards restarts the pack, and the run goes on.
TEST_F(PackedAdapterRunTest, AClockSkewOfAPackedProcessHitsEachOfItsClients) {
    RunOutcome r = run_packed("packed-skew", json::parse(R"({
        "duration_s": 2, "hold_ms": 20,
        "faults": [{"fault": "clock-skew", "target": "client:0", "at_s": 0.3,
                    "offset_ms": 5000, "drift": 0.5},
                   {"fault": "crash-client", "target": "client:1", "at_s": 1.2}]
    })"));
    const auto events = read_history(r.dir / "history.jsonl");
    const auto clocks = nemesis_events(events, "clock");
    ASSERT_EQ(clocks.size(), 1u) << r.summary.to_json()["nemesis"].dump(2);
    const json& proof = clocks[0]["value"]["proof"];
    EXPECT_EQ(proof["via"], "libfaketime");
    EXPECT_TRUE(proof.contains("later")) << proof.dump();
    const std::int64_t ahead = proof["adapter_unix_ms"].get<std::int64_t>() -
                               proof["lockbench_unix_ms"].get<std::int64_t>();
    EXPECT_GE(ahead, 4950);
    EXPECT_LE(ahead, 5050);
    const std::string notes = r.summary.to_json()["notes"].dump();
    EXPECT_NE(notes.find("clock-skew of client 0's adapter process"), std::string::npos) << notes;
    EXPECT_NE(notes.find("hit 2 clients (0, 1)"), std::string::npos) << notes;
    std::set<int> crashed;
    for (const auto& crash : nemesis_events(events, "crash"))
        crashed.insert(crash["value"]["client"].get<int>());
    EXPECT_EQ(crashed, (std::set<int>{0, 1})) << r.summary.to_json()["nemesis"].dump(2);
    EXPECT_EQ(r.summary.to_json()["adapter"]["clients_lost"], 0);
    EXPECT_NE(r.summary.to_json()["verdict"]["valid"], false)
        << r.summary.to_json()["verdict"].dump(2);
}

// A packed process that breaks the protocol loses all its clients: one process of two clients
// is "2 of 2 clients lost", which makes the run unknown (the rule counts clients, not
// processes), and no request of either client is believed.
TEST(AdapterRunTest, APackedProcessThatBreaksLosesEachOfItsClients) {
    TempDir out;
    Workload w = misbehaving_workload("packed-garbage", "garbage 1 concurrent", 2,
                                      {{"clients_per_process", 2}});
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_TRUE(unknown_as_both_clients_lost(r));
    EXPECT_EQ(r.summary.to_json()["adapter"]["clients_per_process"], 2);
    EXPECT_EQ(count_events(r, "acquire", "ok"), 0u);
    EXPECT_EQ(run_exit_code(r), 3);
    EXPECT_TRUE(children_running(::getpid(), "misbehaving_adapter.py").empty());
}

// Packing needs an adapter that answers requests of different clients concurrently, and an
// adapter at all: each refusal is one line, and the usage exit code.
TEST(AdapterRunTest, PackingRefusesAnAdapterThatIsNotConcurrentAndOurOwnStrategies) {
    TempDir out;
    const auto [code, said] = run_lockbench(
        "run --no-yardstick --strategy redis-py --clients 4 --clients-per-process 4 "
        "--duration 1 --out " +
        out.path().string());
    EXPECT_EQ(code, 2);
    EXPECT_EQ(said,
              "lockbench: --clients-per-process 4: redis-py's adapter answers one request at a "
              "time (it does not declare concurrent): its clients would wait for each other's "
              "locks\n");
    const auto [own_code, own_said] = run_lockbench(
        "run --no-yardstick --strategy set_nx_px --clients 4 --clients-per-process 2 "
        "--duration 1 --out " +
        out.path().string());
    EXPECT_EQ(own_code, 2);
    EXPECT_EQ(own_said,
              "lockbench: --clients-per-process 2: set_nx_px is one of lockbench's own strategies, "
              "whose clients run inside lockbench: there is no adapter process to pack them "
              "into\n");
}

TEST(AdapterRunTest, CtrlCLeavesNoAdapterProcess) {
    TempDir out;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl(LOCKBENCH_BINARY, LOCKBENCH_BINARY, "run", "--no-yardstick", "--strategy",
                "null-adapter", "--clients", "3", "--duration", "60", "--out", out.path().c_str(),
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    std::vector<pid_t> adapters;
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (adapters.size() < 3 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
        adapters = children_running(pid, "minimal_adapter.py");
    }
    ASSERT_EQ(adapters.size(), 3u);
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    for (const pid_t adapter : adapters)
        EXPECT_FALSE(process_state(adapter).has_value()) << "adapter " << adapter << " survived";
}

}  // namespace
}  // namespace lockbench
