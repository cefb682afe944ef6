#include "engine/clients/client_threads.hpp"

#include <chrono>

namespace lockbench {

using namespace std::chrono_literals;

ClientThreads::ClientThreads(ClientEnvironment& env, ClientDirectory& directory,
                             SessionFactory make_session, Placement placement)
    : env_(env),
      directory_(directory),
      placement_(std::move(placement)),
      shared_threads_(env.workload.threads),
      thread_count_(env.workload.threads + (placement_.isolated > 0 ? 1 : 0)),
      loops_(static_cast<std::size_t>(thread_count_), nullptr),
      gates_(static_cast<std::size_t>(thread_count_), nullptr),
      stats_(static_cast<std::size_t>(thread_count_)) {
    // A client is made on its own thread, whose loop is published before any client exists.
    env_.make_session = [this, make = std::move(make_session)](int index, int incarnation,
                                                               Clock clock) {
        EventLoop* loop = nullptr;
        {
            std::lock_guard lock(loops_mutex_);
            loop = loops_[static_cast<std::size_t>(thread_of(index))];
        }
        return make(*loop, index, incarnation, std::move(clock));
    };
    threads_.reserve(static_cast<std::size_t>(thread_count_));
    for (int t = 0; t < thread_count_; ++t)
        threads_.emplace_back([this, t] { thread_main(t); });
}

ClientThreads::~ClientThreads() {
    stop_and_join();
}

int ClientThreads::thread_of(int index) const {
    // Clients packed into one adapter process share its reader, on one loop: they run together.
    return index < placement_.isolated
               ? shared_threads_
               : (index / env_.workload.clients_per_process) % shared_threads_;
}

void ClientThreads::fail(const std::string& what) {
    std::lock_guard lock(failure_mutex_);
    if (failure_.empty())
        failure_ = what;
    env_.stop = true;
}

std::string ClientThreads::failure() const {
    std::lock_guard lock(failure_mutex_);
    return failure_;
}

ClientStats ClientThreads::total_stats() const {
    ClientStats total;
    for (const auto& s : stats_)
        total.merge(s);
    return total;
}

void ClientThreads::wait_registered() const {
    while (registered_threads_.load() < thread_count_)
        std::this_thread::sleep_for(1ms);
}

void ClientThreads::open_gates() {
    std::lock_guard lock(loops_mutex_);
    for (std::size_t t = 0; t < gates_.size(); ++t) {
        if (gates_[t])
            loops_[t]->post([gate = gates_[t]] { gate->open(); });
    }
}

void ClientThreads::stop() {
    env_.stop = true;
    open_gates();  // a client still waiting at its gate must see the stop
}

void ClientThreads::join() {
    for (auto& th : threads_) {
        if (th.joinable())
            th.join();
    }
}

void ClientThreads::stop_and_join() {
    stop();
    join();
}

void ClientThreads::thread_main(int t) {
    const auto slot = static_cast<std::size_t>(t);
    const bool isolated = t == shared_threads_;
    try {
        // Before the loop exists: its sockets (epoll's wake-up too) belong to the namespace.
        if (isolated) {
            try {
                placement_.enter_isolated();
            } catch (...) {
                registered_threads_.fetch_add(1);
                throw;
            }
        }
        EventLoop loop;
        StartGate gate(loop);
        {
            std::lock_guard lock(loops_mutex_);
            loops_[slot] = &loop;
            gates_[slot] = &gate;
        }
        // Nothing may be posted to this loop once it is gone, whichever way it goes.
        struct Unpublish {
            std::function<void()> undo;
            ~Unpublish() { undo(); }
        } unpublish{[&] {
            std::lock_guard lock(loops_mutex_);
            loops_[slot] = nullptr;
            gates_[slot] = nullptr;
            directory_.remove_loop(&loop);
        }};
        const Workload& w = env_.workload;
        std::vector<std::unique_ptr<SimulatedClient>> clients;
        try {
            for (int i = 0; i < w.clients; ++i) {
                if (thread_of(i) != t)
                    continue;
                clients.push_back(std::make_unique<SimulatedClient>(
                    env_, i, stats_[slot],
                    w.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(i)));
                directory_.add(clients.back().get(), &loop);
            }
        } catch (...) {
            registered_threads_.fetch_add(1);
            throw;
        }
        registered_threads_.fetch_add(1);
        std::size_t remaining = clients.size();
        const auto done = [&](std::exception_ptr e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    fail(std::string("client failed: ") + ex.what());
                }
            }
            if (--remaining == 0)
                loop.stop();
        };
        for (auto& c : clients)
            spawn_detached(c->run(gate), done);
        if (placement_.companion && !clients.empty()) {
            std::vector<SimulatedClient*> mine;
            for (auto& c : clients)
                mine.push_back(c.get());
            ++remaining;
            spawn_detached(placement_.companion(loop, std::move(mine), isolated), done);
        }
        if (remaining > 0)
            loop.run();
        // Faults posted to this loop after the clients ended must not run on dead clients: once
        // the loop is unpublished, a post still queued here is dropped when it runs
        // (ClientDirectory::post), here on the clients' own thread.
        unpublish.undo();
        clients.clear();
        loop.run_once(0ms);
    } catch (const std::exception& e) {
        fail(e.what());
    }
}

}  // namespace lockbench
