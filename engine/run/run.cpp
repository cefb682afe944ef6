#include "engine/run/run.hpp"

#include <new>
#include <string>
#include <system_error>

#include "checker/report.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/run/run_steps.hpp"
#include "engine/run/summary.hpp"
#include "strategies/external/adapter_registry.hpp"

namespace lockbench {

Workload workload_as_run(const RunOptions& options) {
    Workload w = options.workload;
    if (options.connections)
        w.connections = *options.connections;
    return w;
}

std::string why_it_cannot_run(const RunOptions& options) {
    try {
        const std::vector<Endpoint> external = external_servers(options);
        Workload w = workload_as_run(options);
        w.resolve(external.size());
        w.validate();
        auto faults = Nemesis::parse(w.faults, w.name);
        Nemesis::validate(faults, w);
        check_external(w, faults, options, external.size());
    } catch (const WorkloadError& e) {
        return e.what();
    }
    return "";
}

// The table of contents of a run (run_steps.hpp).
RunOutcome run_workload(const RunOptions& options) {
    WorkloadRun run(options);
    run.deploy();
    run.wire();
    run.drive();
    return run.finish();
}

RunFailure run_failure(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (const WorkloadError& e) {
        return {e.what(), 2};
    } catch (const EnvironmentError& e) {
        return {e.what(), 4};
    } catch (const AdapterUnavailable& e) {  // a lock library's runtime or files missing
        return {e.what(), 4};
    } catch (const std::system_error& e) {  // a system call, the file system
        return {e.what(), 4};
    } catch (const std::bad_alloc&) {
        return {"out of memory", 4};
    } catch (const std::exception& e) {
        return {std::string("internal error (a bug in lockbench; please report it): ") + e.what(),
                5};
    } catch (...) {
        return {"internal error (a bug in lockbench; please report it): an unknown exception", 5};
    }
}

int run_exit_code(const RunOutcome& outcome) {
    if (outcome.interrupted)
        return 130;
    const RunSummary& summary = outcome.summary;
    if (summary.as_expected)
        return *summary.as_expected ? 0 : 1;
    return checker::exit_code(summary.verdict.verdict);
}

}  // namespace lockbench
