#pragma once

// What the command line says back when a user's input is not what it takes: the nearest names to
// a misspelt one, the flag behind a workload field the flags set, and where the Redis password
// comes from. main.cpp parses; these word its answers.

#include <map>
#include <string>
#include <vector>

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

// The one line a CLI11 parse error becomes: an unknown option is named as such, and the help to
// read is the subcommand's (`lockbench run --help`) when there is one.
std::string parse_error_line(const std::string& what, bool extras, const std::string& subcommand,
                             const std::vector<std::string>& options);

}  // namespace lockbench::cli
