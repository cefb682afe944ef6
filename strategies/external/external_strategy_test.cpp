// Adapter processes as a strategy: the protocol's answers mapped to grants, refusals and doubt,
// each way an adapter can misbehave (one line, `info`, a new process), the process faults'
// footholds (SIGSTOP seen as state T, SIGKILL reaped, libfaketime's offset in `time`), and no
// adapter process outliving its test. The null adapter needs no server.

#include "strategies/external/external_strategy.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/servers/redis_server.hpp"
#include "strategies/external/adapter_process.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const fs::path kSource = LOCKBENCH_TEST_SOURCE_DIR;

bool gone(pid_t pid) {
    return ::kill(pid, 0) != 0 && errno == ESRCH;
}

struct AdapterClientUnderTest {
    EventLoop loop;
    std::shared_ptr<AdapterRun> run = std::make_shared<AdapterRun>();
    std::unique_ptr<Session> session;
    std::unique_ptr<Strategy> strategy;

    explicit AdapterClientUnderTest(const std::string& strategy_name,
                                    ConnectionOptions options = {}) {
        // A node is required; the null adapter never makes lockbench connect to it.
        session = std::make_unique<Session>(
            loop, std::vector<Endpoint>{Endpoint{"127.0.0.1", 1, ""}}, options, "c0-test");
        session->set_extension(kAdapterRunKey, run);
        strategy = make_strategy(strategy_name);
    }
    ~AdapterClientUnderTest() {
        if (strategy)
            run_sync(loop, strategy->shutdown(*session));
    }
    AcquireResult acquire(const std::string& key, std::chrono::milliseconds wait = 0ms,
                          std::chrono::milliseconds lease = 5000ms) {
        return run_sync(loop,
                        strategy->acquire(*session, AcquireRequest{.key = key,
                                                                   .mode = LockMode::Exclusive,
                                                                   .lease = lease,
                                                                   .wait_budget = wait}));
    }
    pid_t pid() {
        AdapterProcess* p = adapter_process(*session);
        return p ? p->pid() : -1;
    }
};

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Reads the clock of `session`'s adapter until `real_ms` of real time passed since `skew` was
// set, and checks each reading against real + offset + drift x (real - since), within 50 ms.
void expect_adapter_clock_until(EventLoop& loop, Session& session, const AdapterClockSkew& skew,
                                std::int64_t real_ms) {
    const std::int64_t since = unix_ms(skew.since);
    const auto expected = [&](std::int64_t real) {
        return real + skew.offset.count() +
               static_cast<std::int64_t>(static_cast<double>(real - since) * skew.drift);
    };
    for (;;) {
        const std::int64_t before = unix_ms(std::chrono::system_clock::now());
        const std::int64_t seen = run_sync(loop, adapter_time(session));
        const std::int64_t after = unix_ms(std::chrono::system_clock::now());
        EXPECT_GE(seen, expected(before) - 50) << "before " << before << " since " << since;
        EXPECT_LE(seen, expected(after) + 50) << "after " << after << " since " << since;
        if (after - since >= real_ms || ::testing::Test::HasFailure())
            return;
    }
}

std::string misbehaving(const std::string& mode, int nth) {
    return std::string(kCommandPrefix) + "/usr/bin/python3 " +
           (kSource / "strategies/external/testing/misbehaving_adapter.py").string() + " " + mode +
           " " + std::to_string(nth);
}

TEST(NullAdapter, GrantsRefusesRenewsAndReleasesAsTheProtocolSays) {
    AdapterClientUnderTest c("null-adapter");
    const auto first = c.acquire("orders");
    const Grant* grant = std::get_if<Grant>(&first);
    ASSERT_NE(grant, nullptr);
    EXPECT_FALSE(grant->token.empty());
    EXPECT_FALSE(grant->fence.has_value());
    const auto second = c.acquire("orders");
    ASSERT_TRUE(std::holds_alternative<Denied>(second));
    EXPECT_EQ(std::get<Denied>(second).why, Denied::Why::Held);
    EXPECT_TRUE(run_sync(c.loop, c.strategy->renew(*c.session, *grant)));
    Grant stranger = *grant;
    stranger.token = "someone-else";
    EXPECT_EQ(run_sync(c.loop, c.strategy->release(*c.session, stranger)), ReleaseOutcome::NotHeld);
    EXPECT_FALSE(run_sync(c.loop, c.strategy->renew(*c.session, stranger)));
    EXPECT_EQ(run_sync(c.loop, c.strategy->release(*c.session, *grant)), ReleaseOutcome::Released);
    EXPECT_EQ(c.run->clients_lost(), 0u);
}

TEST(NullAdapter, ProbeNamesLibraryAndCapabilities) {
    const auto spec = find_adapter("null-adapter");
    ASSERT_TRUE(spec);
    const AdapterProbe& probe = probe_adapter(*spec);
    EXPECT_EQ(probe.library, "in-memory");
    EXPECT_EQ(probe.version, "1.0");
    EXPECT_TRUE(probe.services.empty());
    EXPECT_TRUE(probe.capabilities.renew);
    EXPECT_FALSE(probe.capabilities.zookeeper);
    EXPECT_FALSE(probe.capabilities.multi_node);
}

TEST(NullAdapter, ShutdownLeavesNoProcess) {
    pid_t pid = -1;
    {
        AdapterClientUnderTest c("null-adapter");
        ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
        pid = c.pid();
        ASSERT_GT(pid, 0);
        ASSERT_TRUE(process_state(pid).has_value());
        run_sync(c.loop, c.strategy->shutdown(*c.session));
        EXPECT_EQ(c.pid(), -1);
    }
    EXPECT_TRUE(gone(pid));
}

TEST(NullAdapter, SessionGoingKillsItsProcess) {
    pid_t pid = -1;
    {
        AdapterClientUnderTest c("null-adapter");
        ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
        pid = c.pid();
        c.strategy.reset();  // no shutdown: the session's end alone must end the process
    }
    EXPECT_TRUE(gone(pid));
}

TEST(ProtocolDocument, CarriesTheMinimalAdapterVerbatim) {
    std::ifstream doc_in(kSource / "strategies/adapters/PROTOCOL.md");
    std::ifstream adapter_in(kSource / "strategies/adapters/examples/minimal_adapter.py");
    std::stringstream doc, adapter;
    doc << doc_in.rdbuf();
    adapter << adapter_in.rdbuf();
    ASSERT_FALSE(adapter.str().empty());
    EXPECT_NE(doc.str().find("```python\n" + adapter.str() + "```\n"), std::string::npos)
        << "PROTOCOL.md's example differs from strategies/adapters/examples/minimal_adapter.py";
}

TEST(AdapterRegistry, MissingRuntimeOrFileIsUnavailableWithItsReason) {
    const auto spec = find_adapter("command:/nonexistent/runtime adapter.py");
    ASSERT_TRUE(spec);
    EXPECT_EQ(missing_for(*spec),
              "runtime '/nonexistent/runtime' is not installed (not found on PATH)");
    try {
        find_strategy("command:/nonexistent/runtime adapter.py");
        FAIL() << "an adapter that cannot run was found";
    } catch (const AdapterUnavailable& e) {
        EXPECT_NE(std::string(e.what()).find("is unavailable: runtime '/nonexistent/runtime'"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(find_strategy("no-such-strategy"), nullptr);
}

TEST(AdapterRegistry, ProbeAnswerIsReadStrictly) {
    EXPECT_THROW(parse_probe("x", {{"type", "init_ok"}, {"library", "l"}, {"version", "1"}}),
                 AdapterUnavailable);  // no services
    EXPECT_THROW(
        parse_probe(
            "x",
            {{"type", "init_ok"}, {"library", "l"}, {"version", "1"}, {"services", {"mysql"}}}),
        AdapterUnavailable);
    const auto probe = parse_probe("x", {{"type", "init_ok"},
                                         {"library", "l"},
                                         {"version", "1"},
                                         {"services", {"redis-masters"}},
                                         {"capabilities", {{"fencing", true}}}});
    EXPECT_TRUE(probe.capabilities.multi_node);
    EXPECT_TRUE(probe.capabilities.fencing);
    EXPECT_FALSE(probe.capabilities.zookeeper);
}

// Topology 'sentinel': lockbench's clients follow a failover through the sentinels, and a
// library can only do the same if init names them (PROTOCOL.md, init's servers).
TEST(InitServers, NameTheSentinelsAndTheirMasterNameBesideTheMaster) {
    AdapterClientUnderTest c("redis-py");
    const auto* external = dynamic_cast<const ExternalStrategy*>(c.strategy.get());
    ASSERT_NE(external, nullptr);
    EXPECT_EQ(external->init_servers(*c.session).dump(),
              R"({"redis":[{"host":"127.0.0.1","port":1,"role":"master"}]})");
    c.run->sentinels = {Endpoint{"10.0.0.1", 26379, ""}, Endpoint{"10.0.0.2", 26379, ""}};
    c.run->sentinel_master_name = "lockbench";
    EXPECT_EQ(external->init_servers(*c.session).dump(),
              R"({"redis":[{"host":"127.0.0.1","port":1,"role":"master"},)"
              R"({"host":"10.0.0.1","master_name":"lockbench","port":26379,"role":"sentinel"},)"
              R"({"host":"10.0.0.2","master_name":"lockbench","port":26379,"role":"sentinel"}]})");
}

// The user's --redis as it reaches the library: a unix socket by its path, an ACL user with
// its password (PROTOCOL.md, init's servers).
TEST(InitServers, NameAUnixSocketByItsPathAndTheAclUser) {
    AdapterClientUnderTest c("redis-py");
    c.session = std::make_unique<Session>(
        c.loop, std::vector<Endpoint>{Endpoint{"/run/redis.sock", 6379, "pw", "alice"}},
        ConnectionOptions{}, "c0-test");
    c.session->set_extension(kAdapterRunKey, c.run);
    const auto* external = dynamic_cast<const ExternalStrategy*>(c.strategy.get());
    ASSERT_NE(external, nullptr);
    EXPECT_EQ(
        external->init_servers(*c.session).dump(),
        R"({"redis":[{"password":"pw","role":"master","unix_socket":"/run/redis.sock","user":"alice"}]})");
}

TEST(CommandLine, SplitsOnSpacesWithQuotes) {
    EXPECT_EQ(split_command_line("python3  'my adapter.py' -x"),
              (std::vector<std::string>{"python3", "my adapter.py", "-x"}));
    EXPECT_THROW(split_command_line("  "), std::invalid_argument);
    EXPECT_THROW(split_command_line("node \"x.js"), std::invalid_argument);
}

class Misbehaviour : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(Misbehaviour, IsOneLineAnInfoAndANewProcess) {
    const auto& [mode, said] = GetParam();
    // Late: an answer is due within wait + command timeout + 1 s.
    AdapterClientUnderTest c(misbehaving(mode, 2), ConnectionOptions{.command_timeout = 100ms});
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    const pid_t first = c.pid();
    ::testing::internal::CaptureStderr();
    try {
        c.acquire("k");
        ADD_FAILURE() << "a misbehaving adapter's answer was taken";
    } catch (const AdapterBroken& e) {
        EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("client c0-test (" + misbehaving(mode, 2) + "): adapter (pid " +
                       std::to_string(first) + ") " + said),
              std::string::npos)
        << err;
    EXPECT_TRUE(gone(first));
    EXPECT_EQ(c.run->clients_lost(), 1u);
    // The successor: a new process, which grants again (its first acquire).
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    EXPECT_NE(c.pid(), first);
    EXPECT_GT(c.pid(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Misbehaviour,
    ::testing::Values(
        std::pair{"garbage", "answered a line that is not a JSON object: 'this is not json'"},
        std::pair{"wrong-id", "answered in_reply_to 1003, which no request in flight has"},
        std::pair{"late", "gave no answer to acquire within 1100 ms (late or silent)"},
        std::pair{"exit", "exited with status 3 with a request in flight"},
        std::pair{"close-stdout", "closed its standard output with a request in flight"}),
    [](const auto& test) {
        std::string name = test.param.first;
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });

TEST(AppliedLease, IsNothingWhereTheAdapterDoesNotSay) {
    AdapterClientUnderTest c("null-adapter");
    EXPECT_EQ(run_sync(c.loop, c.strategy->applied_lease(*c.session, 300ms)), std::nullopt);
    // Learned by starting the client's process: the run's first acquire finds it running.
    EXPECT_GT(c.pid(), 0);
}

TEST(AppliedLease, IsInitOksLeaseForTheLeaseInitAskedFor) {
    AdapterClientUnderTest c(misbehaving("lease", 1));
    EXPECT_EQ(run_sync(c.loop, c.strategy->applied_lease(*c.session, 300ms)), 2000ms);
    const pid_t first = c.pid();
    // A successor's init asks for the same lease, and is believed again.
    ASSERT_TRUE(adapter_process(*c.session)->crash());
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    EXPECT_NE(c.pid(), first);
    EXPECT_EQ(adapter_client(*c.session)->applied_lease, 2000ms);
}

TEST(AppliedLease, NotAPositiveIntegerIsAnUnexpectedAnswerAndANewProcessNext) {
    AdapterClientUnderTest c(misbehaving("bad-lease", 1));
    try {
        run_sync(c.loop, c.strategy->applied_lease(*c.session, 300ms));
        ADD_FAILURE() << "lease_ms 0 was believed";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("lease_ms must be a positive integer"),
                  std::string::npos)
            << e.what();
    }
    // The process whose init failed is gone, not left serving uninitialised.
    EXPECT_EQ(adapter_process(*c.session), nullptr);
    EXPECT_EQ(adapter_client(*c.session)->processes_started, 1);
}

TEST(AppliedLease, AnAcquireOksLeaseIsThatGrantsOwn) {
    AdapterClientUnderTest c(misbehaving("grant-lease", 1));
    // etcd's rounding: 300 ms asked is 2 s applied, 5000 ms stays, 5001 ms is 6 s.
    const auto applied = [&](std::chrono::milliseconds asked) {
        AcquireResult result = c.acquire("k", 0ms, asked);
        EXPECT_TRUE(std::holds_alternative<Grant>(result));
        const Grant& grant = std::get<Grant>(result);
        EXPECT_EQ(grant.lease, asked);
        return grant.applied_lease;
    };
    EXPECT_EQ(applied(300ms), 2000ms);
    EXPECT_EQ(applied(5000ms), 5000ms);
    EXPECT_EQ(applied(5001ms), 6000ms);
    // Nothing said, nothing applied but what was asked.
    AdapterClientUnderTest quiet(misbehaving("ok", 1));
    const AcquireResult plain = quiet.acquire("k");
    ASSERT_TRUE(std::holds_alternative<Grant>(plain));
    EXPECT_EQ(std::get<Grant>(plain).applied_lease, std::nullopt);
}

class BadGrantLease : public ::testing::TestWithParam<std::string> {};

TEST_P(BadGrantLease, IsAnUnexpectedAnswerInDoubt) {
    AdapterClientUnderTest c(misbehaving(GetParam(), 2));
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    try {
        c.acquire("k");
        ADD_FAILURE() << "a grant whose lease_ms is not a positive integer was believed";
    } catch (const IoError& e) {
        // An IoError is the history's `info`: the grant may have happened, by an unknown lease.
        EXPECT_NE(
            std::string(e.what()).find(
                "adapter: unexpected answer to acquire (lease_ms must be a positive integer of at "
                "most 10^12)"),
            std::string::npos)
            << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(Values, BadGrantLease,
                         ::testing::Values("grant-lease-negative", "grant-lease-string",
                                           "grant-lease-huge"),
                         [](const auto& test) {
                             return test.param.substr(test.param.rfind('-') + 1);
                         });

TEST(AdapterMessages, LostIsHandedToTheRun) {
    AdapterClientUnderTest c(misbehaving("lost", 1));
    std::vector<nlohmann::json> lost;
    c.run->on_lost = [&](const std::string& client, const nlohmann::json& m) {
        EXPECT_EQ(client, "c0-test");
        lost.push_back(m);
    };
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    // The lost line follows the grant's: wait for it on the loop, not for a time.
    const auto until = EventLoop::now() + 5s;
    while (lost.empty() && EventLoop::now() < until)
        c.loop.run_once(10ms);
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_EQ(lost[0]["text"], "test: the lock was lost");
    EXPECT_EQ(lost[0]["key"], "k");
    EXPECT_EQ(c.run->clients_lost(), 0u);
}

// PROTOCOL.md `late_grant`: after the in-doubt answer, both phases reach the run, in order.
TEST(AdapterMessages, LateGrantIsHandedToTheRun) {
    AdapterClientUnderTest c(misbehaving("late-grant", 1));
    std::vector<nlohmann::json> late;
    c.run->on_late_grant = [&](const std::string& client, const nlohmann::json& m) {
        EXPECT_EQ(client, "c0-test");
        late.push_back(m);
    };
    // `timeout`: in doubt, an IoError for the client (an `info` in the history).
    EXPECT_THROW(c.acquire("k"), IoError);
    const auto until = EventLoop::now() + 5s;
    while (late.size() < 2 && EventLoop::now() < until)
        c.loop.run_once(10ms);
    ASSERT_EQ(late.size(), 2u);
    EXPECT_EQ(late[0]["phase"], "granted");
    EXPECT_EQ(late[0]["token"], "late-1");
    EXPECT_EQ(late[1]["phase"], "released");
    EXPECT_EQ(late[1]["ok"], true);
    // Both name the in-doubt acquire as the client noted it (its request's id, tied to the
    // process), which the engine matches.
    const auto request = adapter_acquire_request(*c.session);
    ASSERT_TRUE(request.has_value());
    EXPECT_EQ(late[0]["id"], *request);
    EXPECT_EQ(late[1]["id"], *request);
    EXPECT_EQ(c.run->clients_lost(), 0u);
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
}

// A client's next process numbers its requests from 1 again: the request ids the engine pairs
// late grants by stay apart, tied to each process by its serial number (never reused, as a pid
// can be).
TEST(AdapterMessages, RequestIdsOfAClientsSuccessiveProcessesDiffer) {
    AdapterClientUnderTest c("null-adapter");
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    const auto first = adapter_acquire_request(*c.session);
    run_sync(c.loop, c.strategy->shutdown(*c.session));
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k2")));
    const auto second = adapter_acquire_request(*c.session);
    ASSERT_TRUE(first.has_value());
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(*first & 0xffffffff, *second & 0xffffffff);  // the same id within its process
    EXPECT_NE(*first, *second);
}

// Redlock's split vote: every server refuses while nobody holds the lock. `refused` must not be
// recorded as `held`, which claims a holder the linearizability checker then cannot find.
TEST(AdapterRefusals, RefusedIsADefiniteDenialThatObservesNoHolder) {
    AdapterClientUnderTest c(misbehaving("refused", 2));
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    const auto refused = c.acquire("k");
    ASSERT_TRUE(std::holds_alternative<Denied>(refused));
    EXPECT_EQ(std::get<Denied>(refused).why, Denied::Why::NoQuorum);
    EXPECT_EQ(c.run->clients_lost(), 0u);
}

TEST(AdapterFaults, StopShowsStateTAndResumeEndsIt) {
    AdapterClientUnderTest c("null-adapter");
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    AdapterProcess* p = adapter_process(*c.session);
    ASSERT_TRUE(p->stop(EventLoop::now() + 10s));
    // The signal is delivered asynchronously: wait for the state, bounded.
    auto until = EventLoop::now() + 5s;
    while (process_state(p->pid()) != 'T' && EventLoop::now() < until)
        c.loop.run_once(1ms);
    EXPECT_EQ(process_state(p->pid()), 'T');
    ASSERT_TRUE(p->resume());
    until = EventLoop::now() + 5s;
    while (process_state(p->pid()) == 'T' && EventLoop::now() < until)
        c.loop.run_once(1ms);
    EXPECT_NE(process_state(p->pid()), 'T');
    EXPECT_TRUE(std::holds_alternative<Denied>(c.acquire("k")));  // it answers again
}

TEST(AdapterFaults, KillReapsTheOldPid) {
    AdapterClientUnderTest c("null-adapter");
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    AdapterProcess* p = adapter_process(*c.session);
    const pid_t pid = p->pid();
    EXPECT_TRUE(p->kill_and_reap());
    EXPECT_TRUE(gone(pid));
}

TEST(AdapterFaults, LibfaketimeOffsetShowsInTheAdaptersTime) {
    if (!libfaketime_path())
        GTEST_SKIP() << "libfaketime is not installed";
    const fs::path dir =
        fs::temp_directory_path() / ("lockbench-faketime-" + std::to_string(::getpid()));
    AdapterClientUnderTest c("null-adapter");
    c.run->faketime_dir = dir;
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    const AdapterClient* client = adapter_client(*c.session);
    ASSERT_TRUE(client->faketime_file);
    auto skew_of = [&] {
        const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
        const std::int64_t adapter = run_sync(c.loop, adapter_time(*c.session));
        return adapter - before;
    };
    EXPECT_LT(std::abs(skew_of()), 1000);
    std::ofstream(*client->faketime_file) << "+3600\n";
    const auto skew = skew_of();
    EXPECT_GT(skew, 3'599'000);
    EXPECT_LT(skew, 3'601'000);
    fs::remove_all(dir);
}

// Under libfaketime 0.9.10 with the monotonic clock real, Python's time.sleep failed with EINVAL
// (strategies/adapters/python/libfaketime_sleep.py): a skewed redis-py client whose acquire had to
// wait for a holder's lease to run out answered an error, recorded `info`, instead of the grant.
TEST(AdapterFaults, SkewedRedisPyWaitsForAHeldLockAndIsGranted) {
    if (!libfaketime_path())
        GTEST_SKIP() << "libfaketime is not installed";
    if (std::system("/usr/bin/python3 -c 'import redis' 2>/dev/null") != 0)
        GTEST_SKIP() << "/usr/bin/python3 cannot import redis (python3-redis)";
    RedisServer redis;
    const fs::path dir =
        fs::temp_directory_path() / ("lockbench-faketime-redis-py-" + std::to_string(::getpid()));
    AdapterClientUnderTest c("redis-py");
    c.session = std::make_unique<Session>(c.loop, std::vector<Endpoint>{redis.endpoint()},
                                          ConnectionOptions{}, "c0-test");
    c.session->set_extension(kAdapterRunKey, c.run);
    c.run->faketime_dir = dir;
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("warm-up")));
    const AdapterClient* client = adapter_client(*c.session);
    ASSERT_TRUE(client->faketime_file);
    std::ofstream(*client->faketime_file) << "+5\n";
    // Another owner's lock, free in 300 ms: redis-py retries, sleeping between its attempts.
    redis.command({"SET", c.run->name_space + ":orders", "someone-else", "PX", "300"});
    AcquireResult waited = Denied{};
    EXPECT_NO_THROW(waited = c.acquire("orders", 3000ms));
    EXPECT_TRUE(std::holds_alternative<Grant>(waited));
    EXPECT_EQ(c.run->clients_lost(), 0u);
    fs::remove_all(dir);
}

TEST(AdapterFaults, FaketimeLineTakesBackTheDriftBeforeTheSkew) {
    const auto start = std::chrono::system_clock::time_point(std::chrono::hours(1000));
    EXPECT_EQ(faketime_line({.offset = 5000ms, .drift = 0, .since = start + 2s}, start),
              "+5.000\n");
    EXPECT_EQ(faketime_line({.offset = -250ms, .drift = 0, .since = start}, start), "-0.250\n");
    // libfaketime's rate runs from the process's start: 2 s at x1.5 before the skew are 1 s.
    EXPECT_EQ(faketime_line({.offset = 5000ms, .drift = 0.5, .since = start + 2s}, start),
              "+4.000 x1.500000\n");
    EXPECT_EQ(faketime_line({.offset = 0ms, .drift = 1.0, .since = start + 3s}, start),
              "-3.000 x2.000000\n");
    // A successor started 2 s after the skew adds the drift it missed.
    EXPECT_EQ(faketime_line({.offset = 5000ms, .drift = 0.5, .since = start - 2s}, start),
              "+6.000 x1.500000\n");
}

// A drift shows as the adapter's clock gaining on the real one from the skew on, in this process
// and in its successor, which starts its own libfaketime rate.
TEST(AdapterFaults, LibfaketimeDriftShowsInTheAdaptersTime) {
    if (!libfaketime_path())
        GTEST_SKIP() << "libfaketime is not installed";
    const fs::path dir =
        fs::temp_directory_path() / ("lockbench-faketime-drift-" + std::to_string(::getpid()));
    AdapterClientUnderTest c("null-adapter");
    c.run->faketime_dir = dir;
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k")));
    AdapterClient* client = adapter_client(*c.session);
    ASSERT_TRUE(client->faketime_file);
    client->clock_skew =
        AdapterClockSkew{.offset = 1000ms, .drift = 1.0, .since = std::chrono::system_clock::now()};
    std::ofstream(*client->faketime_file, std::ios::trunc)
        << faketime_line(*client->clock_skew, client->process_started_at);
    expect_adapter_clock_until(c.loop, *c.session, *client->clock_skew, 400);
    const pid_t first = c.pid();
    ASSERT_TRUE(adapter_process(*c.session)->crash());
    ASSERT_TRUE(std::holds_alternative<Grant>(c.acquire("k2")));
    ASSERT_NE(c.pid(), first);
    expect_adapter_clock_until(c.loop, *c.session, *client->clock_skew, 800);
    fs::remove_all(dir);
}

// --clients-per-process: one clock for the pack's process. A drifting skew set through one
// client shows in the other's `time`, and after a crash killed the pack the next process (started
// by the other client's successor) gets the skew's line for its own start; its init lists both
// clients' successors, also the one that has not asked it for anything yet.
TEST(AdapterFaults, APackedProcessKeepsItsSkewAndItsClientsAcrossACrash) {
    if (!libfaketime_path())
        GTEST_SKIP() << "libfaketime is not installed";
    const fs::path dir =
        fs::temp_directory_path() / ("lockbench-faketime-pack-" + std::to_string(::getpid()));
    EventLoop loop;
    auto run = std::make_shared<AdapterRun>();
    run->clients_per_process = 2;
    run->clients = 2;
    run->faketime_dir = dir / "faketime";
    run->log_dir = dir / "logs";
    fs::create_directories(run->log_dir);
    const auto session_of = [&](const std::string& id) {
        auto session = std::make_unique<Session>(
            loop, std::vector<Endpoint>{Endpoint{"127.0.0.1", 1, ""}}, ConnectionOptions{}, id);
        session->set_extension(kAdapterRunKey, run);
        return session;
    };
    auto strategy = make_strategy(misbehaving("ok", 1) + " concurrent");
    const auto granted = [&](Session& session, const std::string& key) {
        return std::holds_alternative<Grant>(
            run_sync(loop, strategy->acquire(session, AcquireRequest{.key = key,
                                                                     .mode = LockMode::Exclusive,
                                                                     .lease = 5000ms,
                                                                     .wait_budget = 0ms})));
    };
    auto c0 = session_of("c0-test");
    auto c1 = session_of("c1-test");
    ASSERT_TRUE(granted(*c0, "k0"));
    ASSERT_TRUE(granted(*c1, "k1"));
    const pid_t first = adapter_process(*c0)->pid();
    ASSERT_EQ(adapter_process(*c1)->pid(), first);

    const AdapterClockSkew skew{
        .offset = 1000ms, .drift = 1.0, .since = std::chrono::system_clock::now()};
    skew_adapter_clock(*c0, skew);
    expect_adapter_clock_until(loop, *c1, skew, 400);

    ASSERT_TRUE(adapter_process(*c0)->crash());
    expect_adapter_pack_successors(*c0);
    auto c1_successor = session_of("c1.1-test");
    ASSERT_TRUE(granted(*c1_successor, "k1"));
    ASSERT_NE(adapter_process(*c1_successor)->pid(), first);
    expect_adapter_clock_until(loop, *c1_successor, skew, 800);

    std::ifstream log(run->log_dir / "c1.1-test.log");
    const std::string logged((std::istreambuf_iterator<char>(log)),
                             std::istreambuf_iterator<char>());
    EXPECT_NE(logged.find(R"(init clients ["c0.1-test", "c1.1-test"])"), std::string::npos)
        << logged;
    run_sync(loop, strategy->shutdown(*c1_successor));
    fs::remove_all(dir);
}

TEST(AdapterClients, ASuccessorsIdCountsTheIncarnation) {
    EXPECT_EQ(successor_client_id("c3-9f3a2b"), "c3.1-9f3a2b");
    EXPECT_EQ(successor_client_id("c3.1-9f3a2b"), "c3.2-9f3a2b");
    EXPECT_EQ(successor_client_id("c12.9-x"), "c12.10-x");
}

}  // namespace
}  // namespace lockbench
