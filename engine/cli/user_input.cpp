#include "engine/cli/user_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/run/workload.hpp"
#include "engine/topology/cluster.hpp"

namespace lockbench::cli {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

}  // namespace

std::vector<std::string> nearest_names(const std::string& word,
                                       const std::vector<std::string>& names, std::size_t limit) {
    std::vector<std::string> found;
    const auto take = [&](auto&& near) {
        for (const auto& name : names) {
            if (found.size() < limit && name != word && near(name))
                found.push_back(name);
        }
        return !found.empty();
    };
    if (word.empty())
        return found;
    // "t1" means t1-holder-paused, not t10-process-pause.
    if (take([&](const std::string& name) { return starts_with(name, word + "-"); }))
        return found;
    // "t1-hol", or "--rate-limit" for --rate.
    if (take([&](const std::string& name) {
            return starts_with(name, word) || starts_with(word, name + "-");
        }))
        return found;
    const std::size_t allowed = std::clamp<std::size_t>(word.size() / 3, 1, 3);
    for (std::size_t distance = 1; distance <= allowed; ++distance) {
        take([&](const std::string& name) { return edit_distance(word, name) == distance; });
    }
    return found;
}

std::string either(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            out += i + 1 == names.size() ? " or " : ", ";
        out += names[i];
    }
    return out;
}

std::string name_the_flag(const std::string& error,
                          const std::map<std::string, std::string>& flags) {
    const std::string origin = "command line: ";
    if (!starts_with(error, origin))
        return error;
    const std::size_t path_end = error.find(": ", origin.size());
    if (path_end == std::string::npos)
        return error;
    const auto flag = flags.find(error.substr(origin.size(), path_end - origin.size()));
    if (flag == flags.end())
        return error;
    return flag->second + error.substr(path_end);
}

std::string with_redis_port(const std::string& item) {
    const bool bracketed_v6 = starts_with(item, "[") && !item.empty() && item.back() == ']';
    if (item.find(':') == std::string::npos || bracketed_v6)
        return item + ":6379";
    return item;
}

std::string redis_password(const std::string& password_flag, const std::string& password_file) {
    if (!password_flag.empty() && !password_file.empty())
        throw WorkloadError("give the password once: --password or --password-file, not both");
    if (!password_flag.empty())
        return password_flag;
    if (!password_file.empty()) {
        std::ifstream in(password_file, std::ios::binary);
        std::string line;
        if (!in || (!std::getline(in, line) && !in.eof()))
            throw WorkloadError("--password-file: cannot read " + password_file);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty())
            throw WorkloadError("--password-file: " + password_file +
                                " is empty (its first line is the password)");
        return line;
    }
    if (const char* from_environment = std::getenv("LOCKBENCH_REDIS_PASSWORD"))
        return from_environment;
    return "";
}

void add_redis_access_options(CLI::App& subcommand, RedisAccessFlags& flags) {
    subcommand.add_option("--user", flags.user,
                          "Redis 6+ ACL user for --redis (AUTH user password); the password "
                          "comes from --password-file, LOCKBENCH_REDIS_PASSWORD or --password");
    subcommand.add_option("--tls-ca", flags.tls_ca,
                          "CA file that a rediss:// server's certificate must chain to (TLS goes "
                          "through an stunnel lockbench starts)");
    subcommand.add_option("--tls-cert", flags.tls_cert,
                          "Client certificate for a rediss:// server that asks for one");
    subcommand.add_option("--tls-key", flags.tls_key, "The client certificate's key")
        ->needs("--tls-cert");
}

namespace {

// A URL's %XX escapes, so that a password may hold ':', '@' or ','.
std::string percent_decoded(const std::string& text, const std::string& item) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        const auto hex = [](char c) {
            return c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
        };
        if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0)
            throw WorkloadError("--redis: '" + item + "': '%' must start an escape like %40");
        out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
        i += 2;
    }
    return out;
}

RedisTarget parse_redis_target(const std::string& item, const std::string& user,
                               const std::string& password) {
    RedisTarget target;
    target.endpoint.user = user;
    target.endpoint.password = password;
    std::string rest = item;
    if (starts_with(rest, "unix:") || starts_with(rest, "/")) {
        rest = rest.substr(starts_with(rest, "unix:") ? 5 : 0);
        // unix:///run/redis.sock, as a URL writes it.
        if (starts_with(rest, "//"))
            rest = rest.substr(2);
        if (!starts_with(rest, "/"))
            throw WorkloadError("--redis: '" + item +
                                "': a unix socket is an absolute path (unix:/run/redis.sock)");
        target.endpoint.host = rest;
        target.endpoint.port = 0;
        return target;
    }
    if (starts_with(rest, "rediss://")) {
        target.tls = true;
        rest = rest.substr(9);
    } else if (starts_with(rest, "redis://")) {
        rest = rest.substr(8);
    } else if (rest.find("://") != std::string::npos) {
        throw WorkloadError("--redis: '" + item +
                            "': the scheme is redis:// or rediss:// (TLS), or unix:PATH");
    }
    if (const std::size_t at = rest.rfind('@'); at != std::string::npos) {
        const std::string credentials = rest.substr(0, at);
        rest = rest.substr(at + 1);
        const std::size_t colon = credentials.find(':');
        if (colon == std::string::npos) {
            target.endpoint.user = percent_decoded(credentials, item);
        } else {
            if (colon > 0)
                target.endpoint.user = percent_decoded(credentials.substr(0, colon), item);
            target.endpoint.password = percent_decoded(credentials.substr(colon + 1), item);
            target.password_in_text = colon + 1 < credentials.size();
        }
    }
    if (rest.find('/') != std::string::npos)
        throw WorkloadError("--redis: '" + item +
                            "': lockbench takes HOST[:PORT] there (no database number or path; "
                            "it uses database 0)");
    try {
        const Endpoint where = Endpoint::parse(with_redis_port(rest));
        target.endpoint.host = where.host;
        target.endpoint.port = where.port;
    } catch (const std::invalid_argument& e) {
        throw WorkloadError(std::string("--redis: ") + e.what());
    }
    return target;
}

}  // namespace

std::vector<RedisTarget> parse_redis_targets(const std::string& list_text, const std::string& user,
                                             const std::string& password) {
    std::vector<RedisTarget> targets;
    if (list_text.empty())
        return targets;
    if (list_text.back() == ',')
        throw WorkloadError("--redis: an empty server in '" + list_text + "'");
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        if (item.empty())
            throw WorkloadError("--redis: an empty server in '" + list_text + "'");
        targets.push_back(parse_redis_target(item, user, password));
    }
    return targets;
}

RedisServers open_redis_servers(const std::string& list_text, const RedisAccessFlags& flags) {
    const std::vector<RedisTarget> targets = parse_redis_targets(
        list_text, flags.user, redis_password(flags.password, flags.password_file));
    if (targets.empty() && !flags.user.empty())
        throw WorkloadError(
            "--user is the ACL user for --redis's servers, and there is no --redis");
    RedisServers servers;
    bool warned = false;
    bool any_tls = false;
    for (const RedisTarget& target : targets) {
        if (target.password_in_text && !warned) {
            std::cerr << "lockbench: warning: the password in --redis is seen by every local user "
                         "in ps; prefer LOCKBENCH_REDIS_PASSWORD or --password-file\n";
            warned = true;
        }
        any_tls |= target.tls;
    }
    if (!any_tls && (!flags.tls_ca.empty() || !flags.tls_cert.empty()))
        throw WorkloadError(
            "--tls-ca and --tls-cert are for a rediss:// server, and --redis names none");
    if (any_tls && flags.tls_ca.empty())
        throw WorkloadError(
            "--redis: rediss:// needs --tls-ca FILE, the CA that signed the server's certificate");
    const std::pair<const char*, const std::string*> tls_files[] = {{"--tls-ca", &flags.tls_ca},
                                                                    {"--tls-cert", &flags.tls_cert},
                                                                    {"--tls-key", &flags.tls_key}};
    for (const auto& [flag, file] : tls_files) {
        if (!file->empty() && !std::ifstream(*file))
            throw WorkloadError(std::string(flag) + ": cannot read " + *file);
    }
    for (const RedisTarget& target : targets) {
        if (!target.tls) {
            servers.endpoints.push_back(target.endpoint);
            continue;
        }
        servers.tunnels.push_back(std::make_unique<TlsTunnel>(
            target.endpoint,
            TlsFiles{.ca = flags.tls_ca, .cert = flags.tls_cert, .key = flags.tls_key}));
        // A cluster's redirects (MOVED, ASK) and CLUSTER SLOTS name nodes by their own
        // addresses, which no tunnel of ours leads to: following one would talk plaintext to a
        // TLS port. Refused here, before any run, rather than failing (or worse) mid-run.
        if (is_cluster_node(servers.tunnels.back()->endpoint()))
            throw EnvironmentError(
                "--redis: rediss://" + target.endpoint.to_string() +
                " is a node of a Redis Cluster; lockbench reaches TLS servers through a tunnel "
                "per --redis address, and the cluster's redirects (MOVED, ASK) name nodes it "
                "has no tunnel to: a Redis Cluster over TLS is not supported");
        servers.endpoints.push_back(servers.tunnels.back()->endpoint());
    }
    return servers;
}

std::string parse_error_line(const std::string& what, bool extras, const std::string& subcommand,
                             const std::vector<std::string>& options) {
    const std::string help =
        "(see lockbench " + (subcommand.empty() ? "" : subcommand + " ") + "--help)";
    // Printed after "lockbench: ", which names the command when there is no subcommand.
    const std::string who = subcommand.empty() ? "there is" : subcommand + " has";
    if (extras) {
        // CLI11: "The following argument(s) was/were not expected: --rate-limit 5".
        const std::size_t colon = what.find(": ");
        std::istringstream words(colon == std::string::npos ? what : what.substr(colon + 2));
        std::string first;
        words >> first;
        if (starts_with(first, "-")) {
            const std::string name = first.substr(0, first.find('='));
            const auto near = nearest_names(name, options, 3);
            return who + " no option " + name +
                   (near.empty() ? "" : "; did you mean " + either(near) + "?") + " " + help;
        }
        return who + " no argument '" + first + "' " + help;
    }
    return what + " " + help;
}

}  // namespace lockbench::cli
