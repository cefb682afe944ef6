#include "engine/topology/inventory.hpp"

#include <fstream>
#include <iterator>

#include "engine/run/json_reader.hpp"

namespace lockbench {

std::string HostControl::describe() const {
    return kind == Kind::Ssh ? "ssh " + ssh_target : std::string("this machine");
}

namespace {

HostControl control_of(ObjectReader& r) {
    HostControl c;
    if (r.find("ssh")) {
        c.kind = HostControl::Kind::Ssh;
        c.ssh_target = r.required_string("ssh");
        if (c.ssh_target.empty() || c.ssh_target.find(' ') != std::string::npos)
            r.fail(r.at("ssh"), "must be user@host or host, not \"" + c.ssh_target + "\"");
        c.ssh_port = static_cast<int>(r.integer("port", c.ssh_port, 1, 65535));
        c.identity = r.string("identity", "");
        if (const nlohmann::json* options = r.optional_array("options")) {
            for (const auto& o : *options) {
                if (!o.is_string())
                    r.fail(r.at("options"), "must be an array of ssh -o options");
                c.ssh_options.push_back(o.get<std::string>());
            }
        }
    } else if (r.boolean("local", false)) {
        c.kind = HostControl::Kind::Local;
        c.netns = r.string("netns", "");
    } else {
        r.fail(r.path(), "needs \"ssh\": \"user@host\" or \"local\": true");
    }
    c.sudo = r.boolean("sudo", false);
    r.finish();
    return c;
}

}  // namespace

Inventory Inventory::from_json(const nlohmann::json& j, const std::string& origin) {
    ObjectReader r(j, origin, "");
    Inventory inv;
    inv.origin = origin;
    inv.name = r.string("name", "inventory");
    const nlohmann::json& nodes = r.required_array("nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        ObjectReader n(nodes[i], origin, "/nodes/" + std::to_string(i));
        InventoryNode node;
        node.name = n.string("name", "node" + std::to_string(i));
        node.role =
            n.choice<std::string>("role", "master", {{"master", "master"}, {"replica", "replica"}});
        node.endpoint.host = n.required_string("host");
        node.endpoint.port = static_cast<int>(n.integer("port", 6379, 1, 65535));
        node.endpoint.password = n.string("password", "");
        if (const nlohmann::json* control = n.optional_object("control")) {
            ObjectReader cr(*control, origin, "/nodes/" + std::to_string(i) + "/control");
            node.control = control_of(cr);
        }
        node.restart = n.string("restart", "");
        if (!node.restart.empty() && !node.control)
            n.fail(n.at("restart"), "needs a control to run it (ssh or local)");
        n.finish();
        for (const auto& other : inv.nodes) {
            if (other.name == node.name)
                n.fail(n.at("name"), "\"" + node.name + "\" names two nodes");
        }
        inv.nodes.push_back(std::move(node));
    }
    r.finish();
    if (inv.masters().empty())
        r.fail("/nodes", "names no master: a run needs at least one node to lock on");
    return inv;
}

Inventory Inventory::load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw WorkloadError(path.string() + ": cannot open the inventory");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        throw WorkloadError(path.string() + ": cannot read the inventory");
    return from_json(json_input::parse_text<WorkloadError>(text, path.string()), path.string());
}

std::vector<const InventoryNode*> Inventory::masters() const {
    std::vector<const InventoryNode*> out;
    for (const auto& n : nodes) {
        if (n.role == "master")
            out.push_back(&n);
    }
    return out;
}

std::vector<Endpoint> Inventory::master_endpoints() const {
    std::vector<Endpoint> out;
    for (const auto* n : masters())
        out.push_back(n->endpoint);
    return out;
}

}  // namespace lockbench
