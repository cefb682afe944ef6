#include "engine/cli/user_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/run/workload.hpp"

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
