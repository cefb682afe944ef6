#pragma once

// The client side of one run: `threads` OS threads, each running an event loop with its share of
// the simulated clients (client i on thread i % threads; clients packed into one adapter process
// on the thread of their pack, (i / clients_per_process) % threads) behind a start gate, so that
// every client connects before the clock starts and none acts before the first faults are in
// place.
// The object owns the threads: whichever way a run ends, its destructor stops and joins them.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/clients/client.hpp"
#include "engine/nemesis/fault.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

// Where clients run, and what runs beside them on their threads (topology 'sentinel').
struct ClientPlacement {
    // Clients 0 … isolated-1 get a thread of their own, which calls enter_isolated() before
    // it makes them (it moves the thread into the isolated clients' network namespace).
    int isolated = 0;
    std::function<void()> enter_isolated;
    // Started on every client thread once its clients exist, and counted as one of them:
    // the thread's loop ends when it has ended too. It must end soon after env.stop is set.
    std::function<Task<void>(EventLoop& loop, std::vector<SimulatedClient*> clients, bool isolated)>
        companion;
};

class ClientThreads {
  public:
    // Makes the Session of a client on `loop` (its thread's).
    using SessionFactory = std::function<std::unique_ptr<Session>(EventLoop& loop, int index,
                                                                  int incarnation, Clock clock)>;

    using Placement = ClientPlacement;

    // Starts the threads; each registers its clients in `directory` and connects them. `env`
    // must outlive this object; its make_session is set here.
    ClientThreads(ClientEnvironment& env, ClientDirectory& directory, SessionFactory make_session,
                  Placement placement = {});
    ~ClientThreads();
    ClientThreads(const ClientThreads&) = delete;
    ClientThreads& operator=(const ClientThreads&) = delete;

    // Blocks until every thread has created and registered its clients (or failed to).
    void wait_registered() const;
    // Lets every connected client start its first cycle.
    void open_gates();
    // Asks every client to stop after its current operation: none starts another cycle.
    void stop();
    // Waits for every thread to end (call stop() first, or it waits for the run to end).
    void join();
    // Both.
    void stop_and_join();

    // The first unexpected exception in a client thread, "" if none. Once set, env.stop is too.
    std::string failure() const;
    // Per-thread counts, merged; only meaningful after stop_and_join().
    ClientStats total_stats() const;

  private:
    void thread_main(int t);
    // The thread client `index` runs on: the isolated clients' own, or index % threads.
    int thread_of(int index) const;
    void fail(const std::string& what);

    ClientEnvironment& env_;
    ClientDirectory& directory_;
    Placement placement_;
    const int shared_threads_;  // the workload's threads, shared by the other clients
    const int thread_count_;    // plus one for isolated clients

    // Each thread's loop and start gate, published while the loop lives.
    mutable std::mutex loops_mutex_;
    std::vector<EventLoop*> loops_;
    std::vector<StartGate*> gates_;

    std::atomic<int> registered_threads_{0};
    std::vector<ClientStats> stats_;
    mutable std::mutex failure_mutex_;
    std::string failure_;
    std::vector<std::thread> threads_;
};

}  // namespace lockbench
