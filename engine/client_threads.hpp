#pragma once

// The client side of one run: `threads` OS threads, each running an event loop with its share of
// the simulated clients (client i on thread i % threads) behind a start gate, so that every
// client connects before the clock starts and none acts before the first faults are in place.
// The object owns the threads: whichever way a run ends, its destructor stops and joins them.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "event_loop.hpp"
#include "nemesis/fault.hpp"

namespace lockbench {

class ClientThreads {
  public:
    // Makes the Session of a client on `loop` (its thread's).
    using SessionFactory = std::function<std::unique_ptr<Session>(EventLoop& loop, int index,
                                                                  int incarnation, Clock clock)>;

    // Starts the threads; each registers its clients in `directory` and connects them. `env`
    // must outlive this object; its make_session is set here.
    ClientThreads(ClientEnvironment& env, ClientDirectory& directory, SessionFactory make_session);
    ~ClientThreads();
    ClientThreads(const ClientThreads&) = delete;
    ClientThreads& operator=(const ClientThreads&) = delete;

    // Blocks until every thread has created and registered its clients (or failed to).
    void wait_registered() const;
    // Lets every connected client start its first cycle.
    void open_gates();
    // Asks every client to stop after its current operation and joins the threads.
    void stop_and_join();

    // The first unexpected exception in a client thread, "" if none. Once set, env.stop is too.
    std::string failure() const;
    // Per-thread counts, merged; only meaningful after stop_and_join().
    ClientStats total_stats() const;

  private:
    void thread_main(int t);
    void fail(const std::string& what);

    ClientEnvironment& env_;
    ClientDirectory& directory_;
    const int thread_count_;

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
