// Reaching a real deployment's Redis with the real `lockbench` binary: an ACL user, a password in
// a redis:// URL, a unix socket, and TLS through the stunnel lockbench starts - each against a
// real redis-server, each refusal one line and exit 4, and no stunnel left behind.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Cli;
using testing::lines;
using testing::lockbench;

std::string run_args(const testing::TempDir& scratch) {
    return "run --no-yardstick --strategy set_nx_px --clients 2 --duration 0.2 --out '" +
           (scratch.path() / "results").string() + "'";
}

// Every process whose command line names a tunnel's folder: lockbench's stunnels.
std::vector<std::string> stunnels_running() {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmdline.find("lockbench-tls-tunnel-") != std::string::npos)
            found.push_back(entry.path().filename().string());
    }
    return found;
}

TEST(RedisAccessTest, ParsesUrlsSocketsAndTheUserFlag) {
    auto t = cli::parse_redis_targets("redis://alice:p%40ss@cache.example:6380", "", "");
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].endpoint.host, "cache.example");
    EXPECT_EQ(t[0].endpoint.port, 6380);
    EXPECT_EQ(t[0].endpoint.user, "alice");
    EXPECT_EQ(t[0].endpoint.password, "p@ss");
    EXPECT_TRUE(t[0].password_in_text);
    EXPECT_FALSE(t[0].tls);

    t = cli::parse_redis_targets("rediss://cache.example,10.0.0.2:7000,bob@h", "carol", "pw");
    ASSERT_EQ(t.size(), 3u);
    EXPECT_TRUE(t[0].tls);
    EXPECT_EQ(t[0].endpoint.to_string(), "cache.example:6379");
    EXPECT_EQ(t[0].endpoint.user, "carol");
    EXPECT_EQ(t[0].endpoint.password, "pw");
    EXPECT_FALSE(t[0].password_in_text);
    EXPECT_EQ(t[1].endpoint.to_string(), "10.0.0.2:7000");
    EXPECT_EQ(t[2].endpoint.user, "bob");
    EXPECT_EQ(t[2].endpoint.password, "pw");

    t = cli::parse_redis_targets(":only-pw@127.0.0.1:6379", "", "");
    EXPECT_EQ(t[0].endpoint.user, "");
    EXPECT_EQ(t[0].endpoint.password, "only-pw");

    t = cli::parse_redis_targets("unix:/run/redis.sock,/tmp/r.sock,unix:///var/r.sock", "", "");
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].endpoint.to_string(), "unix:/run/redis.sock");
    EXPECT_TRUE(t[0].endpoint.is_unix_socket());
    EXPECT_EQ(t[1].endpoint.host, "/tmp/r.sock");
    EXPECT_EQ(t[2].endpoint.host, "/var/r.sock");

    const auto error = [](const std::string& text) {
        try {
            cli::parse_redis_targets(text, "", "");
        } catch (const WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(error("http://h:1"),
              "--redis: 'http://h:1': the scheme is redis:// or rediss:// (TLS), or unix:PATH");
    EXPECT_EQ(error("redis://h:6379/2"),
              "--redis: 'redis://h:6379/2': lockbench takes HOST[:PORT] there (no database "
              "number or path; it uses database 0)");
    EXPECT_EQ(error("unix:run/redis.sock"),
              "--redis: 'unix:run/redis.sock': a unix socket is an absolute path "
              "(unix:/run/redis.sock)");
    EXPECT_EQ(error("redis://a:b%4@h"),
              "--redis: 'redis://a:b%4@h': '%' must start an escape like %40");
    EXPECT_EQ(error("h:1,,h:2"), "--redis: an empty server in 'h:1,,h:2'");
    EXPECT_EQ(error("redis://h:99999"), "--redis: 'h:99999': port must be 1..65535");
}

// A managed service's ACL user: `--user` with the password from a file, or the user and password
// in the URL (which works, and warns once that `ps` shows it); a user the server does not know
// is one line and exit 4.
TEST(RedisAccessTest, AnAclUserConnectsAndAWrongOneIsOneLine) {
    RedisServer server;
    command_once(server.endpoint(),
                 strings("ACL", "SETUSER", "alice", "on", ">alice-pw", "~*", "&*", "+@all"),
                 2000ms);
    command_once(server.endpoint(), strings("ACL", "SETUSER", "default", "off"), 2000ms);
    testing::TempDir scratch;
    const std::string address = "127.0.0.1:" + std::to_string(server.port());
    const fs::path password_file = scratch.path() / "password";
    std::ofstream(password_file) << "alice-pw\n";
    ::unsetenv("LOCKBENCH_REDIS_PASSWORD");

    Cli r =
        lockbench(scratch, run_args(scratch) + " --redis " + address +
                               " --user alice --password-file '" + password_file.string() + "'");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");

    r = lockbench(scratch, run_args(scratch) + " --redis redis://alice:alice-pw@" + address);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: warning: the password in --redis is seen by every local user in ps; "
              "prefer LOCKBENCH_REDIS_PASSWORD or --password-file\n");

    r = lockbench(scratch, run_args(scratch) + " --user alice");
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: --user is the ACL user for --redis's servers, and there is no --redis\n");

    r = lockbench(scratch, run_args(scratch) + " --redis " + address +
                               " --user bob --password-file '" + password_file.string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: cannot reach Redis at " + address + ": AUTH as bob to " + address +
                  " failed: WRONGPASS invalid username-password pair or user is disabled. (the "
                  "password given with --password, --password-file or "
                  "LOCKBENCH_REDIS_PASSWORD was refused)\n");
}

TEST(RedisAccessTest, AUnixSocketRunWorksAndRefusesFaultsThatNeedTcp) {
    testing::TempDir scratch;
    const std::string socket = (scratch.path() / "redis.sock").string();
    RedisServer server({.extra_args = {"--unixsocket", socket, "--unixsocketperm", "700"}});
    Cli r = lockbench(scratch, run_args(scratch) + " --redis unix:" + socket);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    // The run's clients used the server: its counter of commands grew past our own.
    const std::string stats =
        command_once(server.endpoint(), strings("INFO", "commandstats"), 2000ms).as_string();
    EXPECT_NE(stats.find("cmdstat_set:"), std::string::npos) << stats;

    // t6 drops replies at 0.8 s: a run long enough for the fault to be valid, refused anyway.
    r = lockbench(scratch, "run --no-yardstick --strategy set_nx_px --duration 2 --out '" +
                               (scratch.path() / "results-t6").string() + "' --redis " + socket +
                               " '" + std::string(LOCKBENCH_WORKLOADS_DIR) +
                               "/t6-acquire-reply-lost.json'");
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: faults: 'drop-replies' acts through a TCP proxy in front of each "
              "server, and --redis names a unix socket (unix:" +
                  socket + "): give the server's TCP address\n");
    EXPECT_FALSE(fs::exists(scratch.path() / "results-t6"));
}

// The stunnels leading to `port`, by their config file: other tests (other helpers' too) run
// tunnels of their own on this machine meanwhile.
std::vector<std::string> stunnels_to(int port) {
    std::vector<std::string> found;
    for (const std::string& pid : stunnels_running()) {
        std::ifstream in(fs::path("/proc") / pid / "cmdline", std::ios::binary);
        std::string config;
        while (std::getline(in, config, '\0')) {
            if (config.size() > 12 && config.ends_with("stunnel.conf")) {
                const std::string text = testing::read_file(config);
                if (text.find(":" + std::to_string(port) + "\n") != std::string::npos)
                    found.push_back(pid);
            }
        }
    }
    return found;
}

// A CA, and a server certificate it signed for 127.0.0.1, made by openssl in `dir`.
void make_certificates(const fs::path& dir, const std::string& ca_name) {
    const std::string d = "'" + dir.string() + "'";
    std::ofstream(dir / "san.ext") << "subjectAltName=IP:127.0.0.1\n";
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string commands =
        "cd " + d + " && openssl req -x509" + ec + " -keyout " + ca_name + ".key -out " + ca_name +
        ".pem -days 2 -subj /CN=" + ca_name + " && openssl req" + ec +
        " -keyout server.key -out server.csr -subj /CN=127.0.0.1" +
        " && openssl x509 -req -in server.csr -CA " + ca_name + ".pem -CAkey " + ca_name +
        ".key -CAcreateserial -out server.pem -days 2 -extfile san.ext";
    ASSERT_EQ(std::system((commands + " >/dev/null 2>&1").c_str()), 0) << commands;
}

TEST(RedisAccessTest, ATlsRunGoesThroughStunnelAndAWrongCaIsOneLine) {
    if (!find_program("stunnel4") && !find_program("stunnel"))
        GTEST_SKIP() << "stunnel4 is not installed (scripts/bootstrap.sh installs it)";
    testing::TempDir scratch;
    make_certificates(scratch.path(), "ca");
    const fs::path elsewhere = scratch.path() / "other";
    fs::create_directories(elsewhere);
    make_certificates(elsewhere, "other-ca");
    const int tls_port = pick_free_ports(1).front();
    const fs::path dir = scratch.path();
    RedisServer server({.password = "tls-pw",
                        .extra_args = {"--tls-port", std::to_string(tls_port), "--tls-cert-file",
                                       (dir / "server.pem").string(), "--tls-key-file",
                                       (dir / "server.key").string(), "--tls-ca-cert-file",
                                       (dir / "ca.pem").string(), "--tls-auth-clients", "no"}});
    const std::string url = "rediss://127.0.0.1:" + std::to_string(tls_port);
    ::setenv("LOCKBENCH_REDIS_PASSWORD", "tls-pw", 1);

    Cli r = lockbench(scratch, run_args(scratch) + " --redis " + url + " --tls-ca '" +
                                   (dir / "ca.pem").string() + "'");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    const std::string clients =
        command_once(server.endpoint(), strings("INFO", "stats"), 2000ms).as_string();
    EXPECT_NE(clients.find("total_connections_received:"), std::string::npos);
    EXPECT_EQ(stunnels_to(tls_port), std::vector<std::string>{});

    r = lockbench(scratch, run_args(scratch) + " --redis " + url + " --tls-ca '" +
                               (elsewhere / "other-ca.pem").string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("lockbench: cannot reach Redis at " + url +
                              " through TLS: the server's certificate does not verify against "
                              "--tls-ca: ",
                          0),
              0u)
        << r.err;
    EXPECT_EQ(stunnels_to(tls_port), std::vector<std::string>{});

    // The tunnel stands, and the run fails after it started: the tunnel goes with it.
    ::setenv("LOCKBENCH_REDIS_PASSWORD", "wrong", 1);
    r = lockbench(scratch, run_args(scratch) + " --redis " + url + " --tls-ca '" +
                               (dir / "ca.pem").string() + "'");
    ::unsetenv("LOCKBENCH_REDIS_PASSWORD");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find("WRONGPASS"), std::string::npos) << r.err;
    EXPECT_EQ(stunnels_to(tls_port), std::vector<std::string>{});

    // A plain port is not TLS: the handshake's failure says so.
    r = lockbench(scratch, run_args(scratch) +
                               " --redis rediss://127.0.0.1:" + std::to_string(server.port()) +
                               " --tls-ca '" + (dir / "ca.pem").string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err, "lockbench: cannot reach Redis at rediss://127.0.0.1:" +
                         std::to_string(server.port()) +
                         " through TLS: the server did not answer the TLS handshake within 3 s "
                         "(is it a TLS port?)\n");
    EXPECT_EQ(stunnels_to(server.port()), std::vector<std::string>{});

    // A server that asks for a client certificate gets the one --tls-cert names.
    const int mutual_port = pick_free_ports(1).front();
    RedisServer mutual({.extra_args = {"--tls-port", std::to_string(mutual_port), "--tls-cert-file",
                                       (dir / "server.pem").string(), "--tls-key-file",
                                       (dir / "server.key").string(), "--tls-ca-cert-file",
                                       (dir / "ca.pem").string(), "--tls-auth-clients", "yes"}});
    const std::string mutual_url = "rediss://127.0.0.1:" + std::to_string(mutual_port);
    r = lockbench(scratch, run_args(scratch) + " --redis " + mutual_url + " --tls-ca '" +
                               (dir / "ca.pem").string() + "' --tls-cert '" +
                               (dir / "server.pem").string() + "' --tls-key '" +
                               (dir / "server.key").string() + "'");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    r = lockbench(scratch, run_args(scratch) + " --redis " + mutual_url + " --tls-ca '" +
                               (dir / "ca.pem").string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: cannot reach Redis at " + mutual_url +
                         " through TLS: the server ended the TLS session after the handshake "
                         "(as one that wants a client certificate does: --tls-cert, "
                         "--tls-key)\n");
    EXPECT_EQ(stunnels_to(mutual_port), std::vector<std::string>{});

    // The certificate is for 127.0.0.1, not for the name localhost.
    r = lockbench(scratch, run_args(scratch) +
                               " --redis rediss://localhost:" + std::to_string(tls_port) +
                               " --tls-ca '" + (dir / "ca.pem").string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: cannot reach Redis at rediss://localhost:" + std::to_string(tls_port) +
                  " through TLS: the TLS handshake failed: certificate verify failed (is "
                  "the certificate for localhost, as --redis names it?)\n");

    r = lockbench(scratch, run_args(scratch) + " --redis " + url);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err,
              "lockbench: --redis: rediss:// needs --tls-ca FILE, the CA that signed the "
              "server's certificate\n");
}

// A cluster node behind rediss://: its redirects (MOVED, ASK) name nodes by their own addresses,
// which no tunnel leads to. Refused before any run, in one line, exit 4 - never plaintext to a
// TLS port - and no stunnel is left behind.
TEST(RedisAccessTest, ARedisClusterOverTlsIsRefusedUpFront) {
    if (!find_program("stunnel4") && !find_program("stunnel"))
        GTEST_SKIP() << "stunnel4 is not installed (scripts/bootstrap.sh installs it)";
    testing::TempDir scratch;
    make_certificates(scratch.path(), "ca");
    // The cluster bus on a port of its own: the default, the port + 10000, does not exist for a
    // free port above 55535 (as the cluster topology picks them).
    const std::vector<int> ports = pick_free_ports(3);
    const int tls_port = ports[0];
    const fs::path dir = scratch.path();
    RedisServer node(
        {.port = ports[1],
         .extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                        "--cluster-port", std::to_string(ports[2]), "--tls-port",
                        std::to_string(tls_port), "--tls-cert-file", (dir / "server.pem").string(),
                        "--tls-key-file", (dir / "server.key").string(), "--tls-ca-cert-file",
                        (dir / "ca.pem").string(), "--tls-auth-clients", "no", "--tls-cluster",
                        "yes"}});
    const std::string server = "127.0.0.1:" + std::to_string(tls_port);
    const Cli r = lockbench(scratch, run_args(scratch) + " --redis rediss://" + server +
                                         " --tls-ca '" + (dir / "ca.pem").string() + "'");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: --redis: rediss://" + server +
                         " is a node of a Redis Cluster; lockbench reaches TLS servers through a "
                         "tunnel per --redis address, and the cluster's redirects (MOVED, ASK) "
                         "name nodes it has no tunnel to: a Redis Cluster over TLS is not "
                         "supported\n");
    EXPECT_FALSE(fs::exists(scratch.path() / "results"));
    EXPECT_EQ(stunnels_to(tls_port), std::vector<std::string>{});
}

}  // namespace
}  // namespace lockbench
