#include "strategies/external/external_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lockbench {

namespace {

using nlohmann::json;

// "c3" of "c3.1-9f3a2b": a client across its processes (a successor keeps the machine's clock,
// and counts as the same client lost).
std::string client_of(const std::string& client_id) {
    return client_id.substr(0, client_id.find_first_of(".-"));
}

// An `error` answer as the strategy interface says it (PROTOCOL.md's table): `unsupported` is
// definite (nothing happened: `fail`), anything not handled by the caller is in doubt.
[[noreturn]] void throw_error_answer(const json& answer, std::string_view request) {
    const std::string code = answer.value("code", std::string("(no code)"));
    const std::string text = answer.value("text", std::string());
    const std::string what =
        "adapter: " + std::string(request) + " " + code + (text.empty() ? "" : ": " + text);
    if (code == "unsupported")
        throw ReplyError(what);
    throw IoError(what);
}

// An answer of another type than asked, or missing what it must carry: the adapter is confused,
// and the operation may have happened.
[[noreturn]] void throw_unexpected(const json& answer, std::string_view request) {
    throw IoError("adapter: unexpected answer to " + std::string(request) + ": " +
                  answer.dump().substr(0, 200));
}

// A request's id, which is unique in its process only, made unique among the run's processes by
// the process's serial number (a pid could be reused by a client's next process).
std::int64_t request_of_process(std::uint32_t process_serial, std::int64_t id) {
    return (static_cast<std::int64_t>(process_serial) << 32) | (id & 0xffffffff);
}

// 3 of "c3.1-9f3a2b" (make_session names them so).
int client_index(const std::string& client_id) {
    return static_cast<int>(
        std::strtol(client_id.c_str() + (client_id.empty() ? 0 : 1), nullptr, 10));
}

std::string_view mode_word(LockMode mode) {
    return mode == LockMode::Shared ? "shared" : "exclusive";
}

}  // namespace

void AdapterRun::note_broken(const std::string& client, const std::string& reason) {
    std::lock_guard lock(mutex_);
    lost_.insert(client_of(client));
    last_loss_ = client + ": " + reason;
}

std::size_t AdapterRun::clients_lost() const {
    std::lock_guard lock(mutex_);
    return lost_.size();
}

void AdapterRun::note_refused_init(const std::string& what) {
    std::lock_guard lock(mutex_);
    if (!refused_init_)
        refused_init_ = what;
}

std::optional<std::string> AdapterRun::refused_init() const {
    std::lock_guard lock(mutex_);
    return refused_init_;
}

std::string AdapterRun::last_loss() const {
    std::lock_guard lock(mutex_);
    return last_loss_;
}

std::shared_ptr<AdapterPack> AdapterRun::pack_of(const std::string& client_id) {
    if (clients_per_process <= 1)
        return nullptr;
    const int index = client_index(client_id);
    std::lock_guard lock(mutex_);
    auto& pack = packs_[index / clients_per_process];
    if (!pack) {
        pack = std::make_shared<AdapterPack>();
        pack->number = index / clients_per_process;
    }
    pack->members[index] = client_id;
    return pack;
}

void AdapterRun::note_process_fault(const std::string& line) {
    std::lock_guard lock(mutex_);
    process_fault_notes_.push_back(line);
}

std::vector<std::string> AdapterRun::process_fault_notes() const {
    std::lock_guard lock(mutex_);
    return process_fault_notes_;
}

void AdapterRun::set_clock_skew(const std::filesystem::path& faketime_file,
                                const AdapterClockSkew& skew) {
    std::lock_guard lock(mutex_);
    clock_skews_[faketime_file] = skew;
}

std::optional<AdapterClockSkew> AdapterRun::clock_skew(
    const std::filesystem::path& faketime_file) const {
    std::lock_guard lock(mutex_);
    const auto found = clock_skews_.find(faketime_file);
    return found == clock_skews_.end() ? std::nullopt : std::optional(found->second);
}

std::string successor_client_id(const std::string& client_id) {
    const auto nonce_at = client_id.find('-');
    const std::string name = client_id.substr(0, nonce_at);
    const std::string nonce = nonce_at == std::string::npos ? "" : client_id.substr(nonce_at);
    const auto dot = name.find('.');
    const int incarnation = dot == std::string::npos ? 0 : std::atoi(name.c_str() + dot + 1);
    return name.substr(0, dot) + "." + std::to_string(incarnation + 1) + nonce;
}

void expect_adapter_pack_successors(Session& session) {
    AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey);
    const std::shared_ptr<AdapterPack> pack = run ? run->pack_of(session.client_id()) : nullptr;
    if (!pack)
        return;
    // The pack's clients live on one loop thread, this one (AdapterPack).
    const int first = pack->number * run->clients_per_process;
    const std::string nonce = session.client_id().substr(session.client_id().find('-'));
    for (int i = first; i < first + run->clients_per_process && i < run->clients; ++i) {
        const auto member = pack->members.find(i);
        pack->members[i] = successor_client_id(
            member != pack->members.end() ? member->second : "c" + std::to_string(i) + nonce);
    }
}

void skew_adapter_clock(Session& session, const AdapterClockSkew& skew) {
    AdapterClient* client = adapter_client(session);
    if (!client || !client->faketime_file)
        throw IoError("client " + session.client_id() + "'s adapter runs without libfaketime");
    client->clock_skew = skew;
    if (AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey))
        run->set_clock_skew(*client->faketime_file, skew);
    std::ofstream(*client->faketime_file, std::ios::trunc)
        << faketime_line(skew, client->process_started_at);
}

std::vector<int> adapter_pack_mates(Session& session) {
    AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey);
    if (!run || run->clients_per_process <= 1)
        return {};
    const int index = client_index(session.client_id());
    const int first = index / run->clients_per_process * run->clients_per_process;
    std::vector<int> mates;
    for (int i = first; i < first + run->clients_per_process && i < run->clients; ++i) {
        if (i != index)
            mates.push_back(i);
    }
    return mates;
}

void note_adapter_process_fault(Session& session, const std::string& fault) {
    AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey);
    if (!run || run->clients_per_process <= 1)
        return;
    const int index = client_index(session.client_id());
    std::string clients = std::to_string(index);
    for (const int mate : adapter_pack_mates(session))
        clients += ", " + std::to_string(mate);
    // The process, also when the fault just killed it.
    const AdapterClient* client = adapter_client(session);
    const AdapterProcess* process = client ? client->process.get() : nullptr;
    run->note_process_fault(
        fault + " of client " + std::to_string(index) + "'s adapter process" +
        (process ? " (pid " + std::to_string(process->pid()) + ")" : std::string()) + " hit " +
        std::to_string(adapter_pack_mates(session).size() + 1) + " clients (" + clients +
        "): --clients-per-process " + std::to_string(run->clients_per_process) +
        " packs them into one process");
}

std::optional<std::filesystem::path> libfaketime_path() {
    for (const char* candidate : {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                                  "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
                                  "/usr/lib/faketime/libfaketimeMT.so.1"}) {
        std::error_code ignored;
        if (std::filesystem::exists(candidate, ignored))
            return std::filesystem::path(candidate);
    }
    return std::nullopt;
}

std::string faketime_line(const AdapterClockSkew& skew,
                          std::chrono::system_clock::time_point process_start) {
    const double before_since_ms =
        std::chrono::duration<double, std::milli>(skew.since - process_start).count();
    const double offset_ms =
        static_cast<double>(skew.offset.count()) - before_since_ms * skew.drift;
    const auto whole_ms = static_cast<long long>(std::llround(std::abs(offset_ms)));
    char line[64];
    if (skew.drift == 0) {
        std::snprintf(line, sizeof line, "%c%lld.%03lld\n", offset_ms < 0 ? '-' : '+',
                      whole_ms / 1000, whole_ms % 1000);
    } else {
        std::snprintf(line, sizeof line, "%c%lld.%03lld x%.6f\n", offset_ms < 0 ? '-' : '+',
                      whole_ms / 1000, whole_ms % 1000, 1.0 + skew.drift);
    }
    return line;
}

AdapterClient* adapter_client(Session& session) {
    return session.extension<AdapterClient>(kAdapterClientKey);
}

AdapterProcess* adapter_process(Session& session) {
    AdapterClient* client = adapter_client(session);
    return client && client->process && !client->process->broken() ? client->process.get()
                                                                   : nullptr;
}

Task<std::int64_t> adapter_time(Session& session) {
    AdapterProcess* process = adapter_process(session);
    if (!process)
        throw IoError("client " + session.client_id() + " has no adapter process running");
    // Named, not a braced temporary in the co_await: GCC 12 cannot initialise those there.
    json message{{"type", "time"}};
    const json answer = co_await process->call(
        std::move(message), session.connection_options().command_timeout + std::chrono::seconds(1));
    if (answer.value("type", "") != "time_ok" || !answer.contains("unix_ms") ||
        !answer["unix_ms"].is_number())
        throw_unexpected(answer, "time");
    co_return answer["unix_ms"].get<std::int64_t>();
}

ExternalStrategy::ExternalStrategy(AdapterSpec spec, AdapterProbe probe,
                                   const StrategyOptions& options)
    : spec_(std::move(spec)), probe_(std::move(probe)), options_(options) {}

std::chrono::milliseconds ExternalStrategy::answer_timeout(Session& session,
                                                           std::chrono::milliseconds wait) const {
    // PROTOCOL.md: late = more than the wait budget plus the command timeout plus one second.
    return wait + session.connection_options().command_timeout + std::chrono::seconds(1);
}

json ExternalStrategy::init_servers(Session& session) const {
    json servers = json::object();
    const auto needs = [&](const char* s) {
        return std::find(probe_.services.begin(), probe_.services.end(), s) !=
               probe_.services.end();
    };
    if (needs("redis") || needs("redis-masters")) {
        json redis = json::array();
        for (const auto& node : session.nodes()) {
            json entry = node.is_unix_socket() ? json{{"unix_socket", node.host}}
                                               : json{{"host", node.host}, {"port", node.port}};
            entry["role"] = session.cluster() ? "cluster" : "master";
            if (!node.user.empty())
                entry["user"] = node.user;
            if (!node.password.empty())
                entry["password"] = node.password;
            redis.push_back(std::move(entry));
        }
        if (const AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey)) {
            for (const auto& sentinel : run->sentinels) {
                redis.push_back({{"host", sentinel.host},
                                 {"port", sentinel.port},
                                 {"role", "sentinel"},
                                 {"master_name", run->sentinel_master_name}});
            }
        }
        servers["redis"] = std::move(redis);
    }
    if (needs("zookeeper") && !session.zookeeper_hosts().empty()) {
        json zookeeper = json::array();
        std::stringstream list(session.zookeeper_hosts());
        for (std::string host; std::getline(list, host, ',');) {
            const Endpoint e = Endpoint::parse(host);
            zookeeper.push_back({{"host", e.host}, {"port", e.port}});
        }
        servers["zookeeper"] = std::move(zookeeper);
    }
    if (needs("etcd") && !session.etcd_endpoints().empty()) {
        json etcd = json::array();
        for (const auto& e : session.etcd_endpoints())
            etcd.push_back({{"host", e.host}, {"port", e.port}});
        servers["etcd"] = std::move(etcd);
    }
    return servers;
}

Task<AdapterProcess*> ExternalStrategy::ensure_process(Session& session) {
    AdapterClient* client = adapter_client(session);
    if (!client) {
        session.set_extension(kAdapterClientKey, std::make_shared<AdapterClient>());
        client = adapter_client(session);
    }
    if (client->process && !client->process->broken())
        co_return client->process.get();
    AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey);
    // A crash fault killed the packed clients with their process: what one still tries (a
    // cleanup release of a client the crash reaches a moment later) must not start the pack's
    // next process under its old identity. Its successor, a new session, starts it.
    if (run && run->clients_per_process > 1 && client->process && client->process->crashed())
        throw AdapterBroken("the adapter " + client->process->broken_reason());
    // A broken process was killed and reaped when it broke; its successor is a new process.
    client->process.reset();
    const std::shared_ptr<AdapterPack> pack = run ? run->pack_of(session.client_id()) : nullptr;
    if (!pack)
        co_return co_await start_process(session, *client, nullptr);
    // Another client of the pack is starting the process (its runtime, its init): one process
    // serves them all, so this one waits for it instead of starting a second.
    while (pack->starting)
        co_await session.loop().sleep_for(std::chrono::milliseconds(1));
    if (auto running = pack->process.lock(); running && !running->broken()) {
        client->process = std::move(running);
        client->process_started_at = pack->started_at;
        client->applied_lease = pack->applied_lease;
        client->faketime_file = pack->faketime_file;
        co_return client->process.get();
    }
    // Cleared however this ends (an init refused, the client's coroutine destroyed by its
    // crash): the others would otherwise wait forever.
    struct Starting {
        AdapterPack& pack;
        explicit Starting(AdapterPack& p) : pack(p) { pack.starting = true; }
        ~Starting() { pack.starting = false; }
    } starting(*pack);
    AdapterProcess* process = co_await start_process(session, *client, pack.get());
    pack->process = client->process;
    pack->started_at = client->process_started_at;
    pack->applied_lease = client->applied_lease;
    pack->faketime_file = client->faketime_file;
    ++pack->processes_started;
    co_return process;
}

namespace {

// Runs the process under libfaketime, its wall clock read from the client's (or the pack's) file,
// which the run's clock-skew faults write.
void skew_through_libfaketime(Session& session, AdapterClient& client, const AdapterPack* pack,
                              const AdapterRun& run, AdapterLaunch& launch) {
    const auto library = libfaketime_path();
    if (!library)
        throw IoError("libfaketime is not installed: a client's clock cannot be skewed");
    if (!client.faketime_file) {
        // A packed process has one clock for all its clients: one file for the pack.
        client.faketime_file = *run.faketime_dir / ((pack ? "pack" + std::to_string(pack->number)
                                                          : client_of(session.client_id())) +
                                                    ".faketime");
        std::error_code ignored;
        std::filesystem::create_directories(*run.faketime_dir, ignored);
        if (!std::filesystem::exists(*client.faketime_file, ignored))
            std::ofstream(*client.faketime_file) << "+0\n";
    }
    // A successor of a drifting client starts its own rate: the line is for this process,
    // also when another client of the pack, or the skewed client's successor, starts it.
    std::optional<AdapterClockSkew> skew = run.clock_skew(*client.faketime_file);
    if (!skew)
        skew = client.clock_skew;
    if (skew && skew->drift != 0) {
        std::ofstream(*client.faketime_file, std::ios::trunc)
            << faketime_line(*skew, std::chrono::system_clock::now());
    }
    // The file is read on every clock call (no cache), so an offset set during the run takes
    // effect at once; the monotonic clock stays true, as a skewed wall clock leaves it.
    // libfaketime 0.9.10 turns its "monotonic fix" on by itself on recent glibc; it then
    // misjudges the deadlines of condition variables on the monotonic clock, where a JVM
    // parks every timed wait: Curator took seconds per request (no answer to an acquire
    // within its budget). Off, those waits pass through untouched, for every runtime.
    launch.extra_env = {"LD_PRELOAD=" + library->string(),
                        "FAKETIME_TIMESTAMP_FILE=" + client.faketime_file->string(),
                        "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1",
                        "FAKETIME_FORCE_MONOTONIC_FIX=0"};
}

// The clients the process serves: a pack's, by their current ids where they have joined or
// a crash named their successors (expect_adapter_pack_successors), and by their first ids
// ("c5-9f3a2b") where they have not yet.
std::vector<std::string> clients_served(Session& session, const AdapterPack* pack,
                                        const AdapterRun* run) {
    if (!pack)
        return {session.client_id()};
    std::vector<std::string> clients;
    const std::string nonce = session.client_id().substr(session.client_id().find('-'));
    const int first = pack->number * run->clients_per_process;
    for (int i = first; i < first + run->clients_per_process && i < run->clients; ++i) {
        const auto member = pack->members.find(i);
        clients.push_back(member != pack->members.end() ? member->second
                                                        : "c" + std::to_string(i) + nonce);
    }
    return clients;
}

// How the process's messages and errors name who it serves.
std::string who_is_served(Session& session, const AdapterPack* pack,
                          const std::vector<std::string>& clients, const std::string& adapter) {
    std::string who = "client " + session.client_id() + " (" + adapter + ")";
    if (pack) {
        who = "clients";
        for (const auto& id : clients)
            who += (&id == &clients.front() ? " " : ", ") + id;
        who += " (" + adapter + ", one process)";
    }
    return who;
}

// Routes what the process says on its own (PROTOCOL.md: `lost`, `late_grant`) to the run's
// handlers, and its breaking to every client it serves.
void listen_to(AdapterProcess& process, AdapterRun* run, const std::string& client_id,
               const std::vector<std::string>& clients, const std::string& who) {
    // Every client of the process loses it: the "most clients lost" rule counts clients.
    process.set_on_broken([run, clients](const std::string& reason) {
        if (!run)
            return;
        for (const auto& id : clients)
            run->note_broken(id, reason);
    });
    process.set_on_message([run, client_id, clients, who, serial = process.serial()](json message) {
        const std::string type = message.value("type", "");
        // Request ids start again at 1 in a client's next process: the engine gets the id as
        // acquire() noted it, tied to this process.
        if (const auto id = message.find("id");
            type == "late_grant" && id != message.end() && id->is_number_integer())
            *id = request_of_process(serial, id->get<std::int64_t>());
        const auto& handler = !run                   ? nullptr
                              : type == "lost"       ? &run->on_lost
                              : type == "late_grant" ? &run->on_late_grant
                                                     : nullptr;
        if (handler && *handler) {
            // A packed process says whose grant it is (PROTOCOL.md: `client`): one of its
            // clients, maybe a successor that joined after its init.
            const auto owner = message.find("client");
            const bool named =
                owner != message.end() && owner->is_string() &&
                std::any_of(clients.begin(), clients.end(), [&](const std::string& id) {
                    return client_of(id) == client_of(owner->get<std::string>());
                });
            (*handler)(named ? owner->get<std::string>() : client_id, message);
            return;
        }
        std::fprintf(stderr, "lockbench: %s: adapter says %s\n", who.c_str(),
                     message.dump().substr(0, 200).c_str());
    });
}

// Takes init's answer: init_ok, with the lease the library applies where it says. Anything else
// throws, and the process, which serves nothing then, is dropped: the next call starts (and
// inits) a new one.
void accept_init_answer(const json& answer, AdapterClient& client, AdapterRun* run) {
    client.applied_lease.reset();
    try {
        if (answer.value("type", "") == "error") {
            // A definite refusal (this server, this option) is the same on every retry: the run
            // stops at once with it rather than retrying to its connect deadline.
            if (run && answer.value("code", "") == "unsupported")
                run->note_refused_init("unsupported: " + answer.value("text", std::string()));
            throw_error_answer(answer, "init");
        }
        if (answer.value("type", "") != "init_ok")
            throw_unexpected(answer, "init");
        if (const auto lease = answer.find("lease_ms"); lease != answer.end()) {
            // PROTOCOL.md: a positive integer of milliseconds. Anything else would become the
            // history's lease and mislead the checker: the adapter is confused, not believed.
            if (!lease->is_number_integer() || lease->get<std::int64_t>() <= 0)
                throw_unexpected(answer, "init (lease_ms must be a positive integer)");
            client.applied_lease = std::chrono::milliseconds(lease->get<std::int64_t>());
        }
    } catch (...) {
        client.process.reset();
        throw;
    }
}

}  // namespace

Task<AdapterProcess*> ExternalStrategy::start_process(Session& session, AdapterClient& client_ref,
                                                      AdapterPack* pack) {
    AdapterClient* client = &client_ref;
    AdapterRun* run = session.extension<AdapterRun>(kAdapterRunKey);
    AdapterLaunch launch{spec_.argv, {}, std::nullopt};
    if (run && !run->log_dir.empty())
        launch.log = run->log_dir / (session.client_id() + ".log");
    if (run && run->faketime_dir)
        skew_through_libfaketime(session, *client, pack, *run, launch);
    const std::vector<std::string> clients = clients_served(session, pack, run);
    const std::string who = who_is_served(session, pack, clients, spec_.name);
    client->process_started_at = std::chrono::system_clock::now();
    try {
        client->process = std::make_unique<AdapterProcess>(session.loop(), launch, who);
    } catch (const std::exception& e) {
        throw IoError(who + ": cannot start the adapter: " + e.what());
    }
    ++client->processes_started;
    AdapterProcess* process = client->process.get();
    listen_to(*process, run, session.client_id(), clients, who);
    json init = init_request(session, *client, clients, run);
    // A runtime's start (a JVM's class loading) is not an answer being late.
    const json answer =
        co_await process->call(std::move(init), answer_timeout(session) + std::chrono::seconds(30));
    accept_init_answer(answer, *client, run);
    co_return process;
}

json ExternalStrategy::init_request(Session& session, const AdapterClient& client,
                                    const std::vector<std::string>& clients,
                                    const AdapterRun* run) const {
    json init_options{{"connect_timeout_ms", session.connection_options().connect_timeout.count()},
                      {"command_timeout_ms", session.connection_options().command_timeout.count()},
                      {"retry_delay_ms", options_.retry_delay.count()}};
    if (client.requested_lease)
        init_options["lease_ms"] = client.requested_lease->count();
    return json{{"type", "init"},
                {"clients", clients},
                {"namespace", run ? run->name_space : std::string("lockbench")},
                {"servers", init_servers(session)},
                {"options", std::move(init_options)}};
}

Task<std::optional<std::chrono::milliseconds>> ExternalStrategy::applied_lease(
    Session& session, std::chrono::milliseconds requested) {
    AdapterClient* client = adapter_client(session);
    if (!client) {
        session.set_extension(kAdapterClientKey, std::make_shared<AdapterClient>());
        client = adapter_client(session);
    }
    client->requested_lease = requested;
    co_await ensure_process(session);
    co_return client->applied_lease;
}

std::optional<std::int64_t> adapter_acquire_request(Session& session) {
    const AdapterClient* client = adapter_client(session);
    return client ? client->acquire_request_id : std::nullopt;
}

Task<AcquireResult> ExternalStrategy::acquire(Session& session, const AcquireRequest& request) {
    AdapterProcess* process = co_await ensure_process(session);
    // ensure_process() made the client's extension; call() gives the request this id before
    // anything else can write to the process.
    adapter_client(session)->acquire_request_id =
        request_of_process(process->serial(), process->next_request_id());
    json message{{"type", "acquire"},
                 {"client", session.client_id()},
                 {"key", request.key},
                 {"mode", mode_word(request.mode)},
                 {"lease_ms", request.lease.count()},
                 {"wait_ms", request.wait_budget.count()}};
    const json answer =
        co_await process->call(std::move(message), answer_timeout(session, request.wait_budget));
    const std::string type = answer.value("type", "");
    if (type == "error") {
        if (answer.value("code", "") == "held")
            co_return Denied{Denied::Why::Held};
        // Nothing happened, but nobody was seen holding the lock either (Redlock's split vote):
        // recorded as `held` it would claim a holder the checker must then find.
        if (answer.value("code", "") == "refused")
            co_return Denied{Denied::Why::NoQuorum};
        throw_error_answer(answer, "acquire");
    }
    const auto token = answer.find("token");
    if (type != "acquire_ok" || token == answer.end() || !token->is_string())
        throw_unexpected(answer, "acquire");
    Grant grant{.key = request.key,
                .mode = request.mode,
                .token = token->get<std::string>(),
                .fence = std::nullopt,
                .lease = request.lease,
                .validity = request.lease,
                .reentry = answer.value("reentry", false)};
    if (const auto fence = answer.find("fence");
        fence != answer.end() && fence->is_number_integer())
        grant.fence = fence->get<std::int64_t>();
    if (const auto lease = answer.find("lease_ms"); lease != answer.end()) {
        // As init_ok's (PROTOCOL.md): garbage here would become this grant's lease in the history
        // and make the checks wrong either way, so the grant is in doubt instead. Past 10^12 the
        // history's reader refuses the lease (HISTORY.md): the whole run would be unreadable.
        if (!lease->is_number_integer() || lease->get<std::int64_t>() <= 0 ||
            lease->get<std::int64_t>() > 1'000'000'000'000)
            throw_unexpected(answer,
                             "acquire (lease_ms must be a positive integer of at most 10^12)");
        grant.applied_lease = std::chrono::milliseconds(lease->get<std::int64_t>());
    }
    co_return grant;
}

Task<ReleaseOutcome> ExternalStrategy::release(Session& session, const Grant& grant) {
    AdapterProcess* process = co_await ensure_process(session);
    json message{{"type", "release"},
                 {"client", session.client_id()},
                 {"key", grant.key},
                 {"token", grant.token}};
    const json answer = co_await process->call(std::move(message), answer_timeout(session));
    const std::string type = answer.value("type", "");
    if (type == "error") {
        if (answer.value("code", "") == "not-held")
            co_return ReleaseOutcome::NotHeld;
        throw_error_answer(answer, "release");
    }
    if (type != "release_ok")
        throw_unexpected(answer, "release");
    co_return answer.value("still_held", false) ? ReleaseOutcome::StillHeld
                                                : ReleaseOutcome::Released;
}

Task<bool> ExternalStrategy::renew(Session& session, const Grant& grant) {
    AdapterProcess* process = co_await ensure_process(session);
    json message{{"type", "renew"},
                 {"client", session.client_id()},
                 {"key", grant.key},
                 {"token", grant.token},
                 {"lease_ms", grant.lease.count()}};
    const json answer = co_await process->call(std::move(message), answer_timeout(session));
    const std::string type = answer.value("type", "");
    if (type == "error") {
        if (answer.value("code", "") == "not-held")
            co_return false;
        throw_error_answer(answer, "renew");
    }
    if (type != "renew_ok")
        throw_unexpected(answer, "renew");
    co_return true;
}

Task<void> ExternalStrategy::shutdown(Session& session) {
    AdapterClient* client = adapter_client(session);
    if (client && client->process) {
        std::shared_ptr<AdapterProcess> process = std::move(client->process);
        // A packed process still serving another client stays; the last one closes it.
        if (process.use_count() == 1 && !process->broken())
            co_await process->close(std::chrono::milliseconds(1000));
    }
}

}  // namespace lockbench
