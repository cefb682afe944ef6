#include "engine/cli/server_options.hpp"

#include <sstream>
#include <stdexcept>

#include "engine/cli/user_input.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

std::optional<Inventory> load_inventory(const std::string& file) {
    if (file.empty())
        return std::nullopt;
    return Inventory::load(file);
}

std::string parse_zookeeper_list(const std::string& list_text) {
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            Endpoint::parse(item);
        } catch (const std::invalid_argument& e) {
            throw WorkloadError(std::string("--zookeeper: ") + e.what());
        }
    }
    if (!list_text.empty() && (list_text.back() == ',' || list_text.front() == ','))
        throw WorkloadError("--zookeeper: an empty HOST:PORT in '" + list_text + "'");
    return list_text;
}

std::vector<Endpoint> parse_etcd_list(const std::string& list_text) {
    std::vector<Endpoint> endpoints;
    if (list_text.empty())
        return endpoints;
    if (list_text.back() == ',' || list_text.front() == ',')
        throw WorkloadError("--etcd: an empty HOST:PORT in '" + list_text + "'");
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            endpoints.push_back(Endpoint::parse(item));
        } catch (const std::invalid_argument& e) {
            throw WorkloadError(std::string("--etcd: ") + e.what());
        }
    }
    return endpoints;
}

std::vector<Endpoint> parse_redis_list(const std::string& list_text, const std::string& password) {
    std::vector<Endpoint> endpoints;
    if (list_text.empty())
        return endpoints;
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            Endpoint ep = Endpoint::parse(with_redis_port(item));
            ep.password = password;
            endpoints.push_back(ep);
        } catch (const std::invalid_argument& e) {
            throw WorkloadError(std::string("--redis: ") + e.what());
        }
    }
    return endpoints;
}

}  // namespace lockbench::cli
