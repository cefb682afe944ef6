#pragma once

// What the command line says back when a user's input is not what it takes: the nearest names to
// a misspelt one, the flag behind a workload field the flags set, and where the Redis password
// comes from. main.cpp parses; these word its answers.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/servers/tls_tunnel.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench::cli {

// The names a user most likely meant by `word`: those that continue it at a '-' ("t1" ->
// "t1-holder-paused"), else those it begins, else those within a few edits; at most `limit`, in
// the order of `names`. Empty when nothing is near.
std::vector<std::string> nearest_names(const std::string& word,
                                       const std::vector<std::string>& names,
                                       std::size_t limit = 4);

// "a", "a or b", "a, b or c".
std::string either(const std::vector<std::string>& names);

// A workload error that names a field the flags set ("command line: /rate/per_s: must be ..."),
// worded with the flag instead ("--rate: must be ..."), as the flags' own range errors are.
// `flags` maps a field's JSON path to the flag that set it, for the flags given; other errors
// come back as they are.
std::string name_the_flag(const std::string& error,
                          const std::map<std::string, std::string>& flags);

// --redis HOST[:PORT]: a host without a port is Redis's own 6379, as redis-cli takes it.
std::string with_redis_port(const std::string& item);

// The AUTH password for --redis: --password, else the first line of --password-file, else
// $LOCKBENCH_REDIS_PASSWORD (like redis-cli's REDISCLI_AUTH: a password on the command line is
// seen by every local user in `ps`). Throws WorkloadError when both flags are given or the file
// cannot be read.
std::string redis_password(const std::string& password_flag, const std::string& password_file);

// How to reach --redis's servers besides where they are: the ACL user, the password's flags and
// the TLS files.
struct RedisAccessFlags {
    std::string user;
    std::string password;
    std::string password_file;
    std::string tls_ca;
    std::string tls_cert;
    std::string tls_key;
};

// Adds --user, --tls-ca, --tls-cert and --tls-key to a subcommand that takes --redis.
void add_redis_access_options(CLI::App& subcommand, RedisAccessFlags& flags);

// One server of --redis's list as written.
struct RedisTarget {
    Endpoint endpoint;              // a unix socket's path as its host
    bool tls = false;               // rediss://
    bool password_in_text = false;  // seen by every local user in `ps`
};

// --redis's list: each item HOST[:PORT], [redis://|rediss://][USER[:PASSWORD]@]HOST[:PORT]
// (USER and PASSWORD %-encoded as in a URL), unix:PATH or a PATH starting with '/'. A server
// without its own user or password takes `user` and `password`. Throws WorkloadError naming the
// item that is wrong.
std::vector<RedisTarget> parse_redis_targets(const std::string& list_text, const std::string& user,
                                             const std::string& password);

// --redis's servers as the run reaches them: a TLS server through a tunnel of its own, which
// lives as long as this object.
struct RedisServers {
    std::vector<Endpoint> endpoints;
    std::vector<std::unique_ptr<TlsTunnel>> tunnels;
};

// Parses --redis with its access flags, warns in one line on stderr when a password is written
// in --redis, and starts the TLS tunnels. Throws WorkloadError for bad input, EnvironmentError
// when a tunnel cannot reach its server.
RedisServers open_redis_servers(const std::string& list_text, const RedisAccessFlags& flags);

// The one line a CLI11 parse error becomes: an unknown option is named as such, and the help to
// read is the subcommand's (`lockbench run --help`) when there is one.
std::string parse_error_line(const std::string& what, bool extras, const std::string& subcommand,
                             const std::vector<std::string>& options);

}  // namespace lockbench::cli
