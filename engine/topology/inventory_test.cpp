// The inventory of a user's deployment is read strictly: every mistake names the file and the
// JSON path, before anything connects to a host.

#include "engine/topology/inventory.hpp"

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/run/json_reader.hpp"

namespace lockbench {
namespace {

using nlohmann::json;

std::string error_of(const std::string& text) {
    try {
        Inventory::from_json(json::parse(text), "inv.json");
    } catch (const WorkloadError& e) {
        return e.what();
    }
    return "";
}

TEST(InventoryTest, ReadsNodesTheirRolesAndHowToReachTheirHosts) {
    const Inventory inv = Inventory::from_json(json::parse(R"({"name": "staging", "nodes": [
        {"name": "r1", "role": "master", "host": "10.0.0.5", "port": 6380, "password": "pw",
         "control": {"ssh": "admin@10.0.0.5", "port": 2222, "identity": "~/.ssh/k",
                     "options": ["StrictHostKeyChecking=accept-new"], "sudo": true},
         "restart": "systemctl start redis-server"},
        {"name": "r2", "role": "replica", "host": "10.0.0.6"},
        {"name": "r3", "host": "10.0.0.7", "control": {"local": true, "netns": "/run/netns/x"}}]})"),
                                               "inv.json");
    EXPECT_EQ(inv.name, "staging");
    ASSERT_EQ(inv.nodes.size(), 3u);
    const InventoryNode& r1 = inv.nodes[0];
    EXPECT_EQ(r1.endpoint.to_string(), "10.0.0.5:6380");
    EXPECT_EQ(r1.endpoint.password, "pw");
    ASSERT_TRUE(r1.control);
    EXPECT_EQ(r1.control->kind, HostControl::Kind::Ssh);
    EXPECT_EQ(r1.control->ssh_port, 2222);
    EXPECT_TRUE(r1.control->sudo);
    EXPECT_EQ(r1.control->describe(), "ssh admin@10.0.0.5");
    EXPECT_EQ(inv.nodes[1].endpoint.port, 6379);
    EXPECT_FALSE(inv.nodes[1].control);
    EXPECT_EQ(inv.nodes[2].control->kind, HostControl::Kind::Local);
    EXPECT_EQ(inv.nodes[2].control->netns, "/run/netns/x");
    // The masters are the lock nodes, in order: node:1 is r3.
    ASSERT_EQ(inv.masters().size(), 2u);
    EXPECT_EQ(inv.masters()[1]->name, "r3");
}

// Every way a file can fail to be JSON is bad input naming it: a number no double holds used to
// escape as an out_of_range error, and the CLI called it an internal error (exit 5).
TEST(InventoryTest, AFileThatIsNotJsonIsBadInputNamingItAndWhere) {
    testing::TempDir scratch;
    const auto error_of_file = [&](const std::string& text) {
        const auto file = scratch.path() / "inv.json";
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
        try {
            Inventory::load(file);
        } catch (const WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string f = (scratch.path() / "inv.json").string();
    EXPECT_EQ(error_of_file("{\"nodes\": [\n  {\"host\": \"h\", \"port\": 1e400}]}"),
              f + ": not valid JSON: at line 2, column 25: number overflow parsing '1e400'");
    EXPECT_EQ(error_of_file("{\"nodes\": [}"),
              f + ": not valid JSON: parse error at line 1, column 12: syntax error while "
                  "parsing value - unexpected '}'; expected '[', '{', or a literal");
    EXPECT_EQ(error_of_file("{\"nodes\": [{\"host\": 5}]}"),
              f + ": /nodes/0/host: must be a string, not a number");
    EXPECT_EQ(error_of_file("{\"nodes\": [{\"host\": \"h\", \"port\": 1e300}]}"),
              f + ": /nodes/0/port: must be an integer, not a number");
    EXPECT_EQ(error_of_file("{\"nodes\": [{\"host\": \"h\", \"port\": 18446744073709551615}]}"),
              f + ": /nodes/0/port: must be between 1 and 65535, not 18446744073709551615");
}

TEST(InventoryTest, EveryErrorNamesItsJsonPath) {
    const std::map<std::string, std::string> cases{
        {R"({})", "inv.json: /nodes: missing"},
        {R"({"nodes": []})",
         "inv.json: /nodes: names no master: a run needs at least one node to lock on"},
        {R"({"nodes": [{"port": 6379}]})", "inv.json: /nodes/0/host: missing"},
        {R"({"nodes": [{"host": "h", "role": "boss"}]})",
         "inv.json: /nodes/0/role: must be one of master|replica, not \"boss\""},
        {R"({"nodes": [{"host": "h", "port": 70000}]})",
         "inv.json: /nodes/0/port: must be between 1 and 65535, not 70000"},
        {R"({"nodes": [{"host": "h", "control": {}}]})",
         "inv.json: /nodes/0/control: needs \"ssh\": \"user@host\" or \"local\": true"},
        {R"({"nodes": [{"host": "h", "control": {"ssh": "a b"}}]})",
         "inv.json: /nodes/0/control/ssh: must be user@host or host, not \"a b\""},
        {R"({"nodes": [{"host": "h", "control": {"ssh": "u@h", "colour": 1}}]})",
         "inv.json: /nodes/0/control/colour: unknown field"},
        {R"({"nodes": [{"host": "h", "restart": "service redis start"}]})",
         "inv.json: /nodes/0/restart: needs a control to run it (ssh or local)"},
        {R"({"nodes": [{"host": "h", "name": "a"}, {"host": "i", "name": "a"}]})",
         "inv.json: /nodes/1/name: \"a\" names two nodes"},
        {R"({"nodes": [{"host": "h", "role": "replica"}]})",
         "inv.json: /nodes: names no master: a run needs at least one node to lock on"},
    };
    for (const auto& [text, expected] : cases)
        EXPECT_EQ(error_of(text), expected) << text;
}

}  // namespace
}  // namespace lockbench
