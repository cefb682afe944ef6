#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing, builds, then either
# runs the default suite on an embedded redis-server or runs every test.
#
#   scripts/setup.sh run              # install, build (Release), run the default suite
#   scripts/setup.sh test             # install, check formatting, build with warnings as errors,
#                                     # run every ctest
#   scripts/setup.sh test --sanitize  # ... then the tests again under ASan+UBSan and under TSan
#   scripts/setup.sh test --gate      # ... then the quick suite without the topology scenarios
#                                     # and the gate against results/baseline.json (what CI
#                                     # does, with --sanitize); the scenario tests the suite
#                                     # asserts run there only
#   scripts/setup.sh test --topology  # ... and the opt-in label `topology`: the scenarios that
#                                     # start many servers (Sentinel in network namespaces, a
#                                     # Redis Cluster, ZooKeeper ensembles) as tests
#   scripts/setup.sh test --fuzz      # ... and the opt-in label `fuzz`: each libFuzzer target
#                                     # (EDN, JSONL history, workload) for LOCKBENCH_FUZZ_SECONDS
#                                     # (default 60), built with clang in build/fuzz
#
# Environment: LOCKBENCH_JOBS (build parallelism, default: nproc), LOCKBENCH_TEST_JOBS (tests at a
# time but the timing-based ones, default: twice that), CTEST_ARGS (extra ctest args).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
mode=${1:-}
[[ $mode == run || $mode == test ]] || { usage >&2; exit 2; }
shift
sanitize=0
gate=0
topology=0
fuzz=0
extra_run_args=()
while (($#)); do
  case $1 in
    --sanitize) sanitize=1 ;;
    --gate) gate=1 ;;
    --topology) topology=1 ;;
    --fuzz) fuzz=1 ;;
    -h|--help) usage; exit 0 ;;
    *) extra_run_args+=("$1") ;;
  esac
  shift
done

"$here/scripts/bootstrap.sh"
# The npm adapters' libraries at the versions package-lock.json pins; only when that file is newer
# than the last install, so a machine already set up does not touch the network.
node_adapters=$here/strategies/adapters/node
if [[ ! $node_adapters/node_modules/.package-lock.json -nt $node_adapters/package-lock.json ]]; then
  (cd "$node_adapters" && npm ci --no-audit --no-fund >&2) ||
    { echo "setup: npm ci failed in $node_adapters (the npm adapters' libraries)" >&2; exit 4; }
fi

jobs=${LOCKBENCH_JOBS:-$(nproc)}
# A compiler cache where the machine has one: a machine that builds again (the next CI run, a
# developer's next test) compiles only what changed. The compiler's output is the same either way.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Files built with the precompiled header (the test and sanitizer builds) are cached only with
  # this sloppiness.
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
# Each stage says how long it took: CI has a time budget, and a log that shows where the minutes
# went is how a slow stage is found.
timed() {  # timed <what> <command...>; keeps the command's exit status
  local what=$1 started=$SECONDS status=0; shift
  "$@" || status=$?
  echo "setup: $what took $((SECONDS - started)) s" >&2
  return "$status"
}
build() {  # build <dir> <cmake build type> [cmake args...]
  local dir=$1 type=$2; shift 2
  cmake -S "$here" -B "$here/build/$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${launcher[@]}" "$@" >/dev/null
  timed "building $dir" cmake --build "$here/build/$dir" -j "$jobs"
}
# Most tests wait on the servers and processes they start: under ASan, 706 of them used 178 s of
# CPU (a third of it the kernel's) in the 224 s they took at one per core on two cores. Twice as
# many at a time as cores, then; the demonstrations race real timers and keep one per core.
test_jobs=${LOCKBENCH_TEST_JOBS:-$((jobs * 2))}
run_tests() {  # run_tests <dir> <what> [parallel tests, default $test_jobs]
  # ctest's own summary line ("100% tests passed, 0 tests failed out of N") is what CI reads.
  # No test gets a second try: a test that fails by chance is a race to fix, not to hide.
  timed "$2" ctest --test-dir "$here/build/$1" --output-on-failure --timeout 600 -j "${3:-$test_jobs}" ${CTEST_ARGS:-}
}

case $mode in
  run)
    build release Release -DLOCKBENCH_BUILD_TESTS=OFF -DLOCKBENCH_BUILD_BENCHMARKS=OFF
    # The default suite: every shipped scenario against every strategy it names, on embedded
    # redis-servers; prints the strategy x scenario table and exits 1 on an unexpected outcome.
    # Its progress is on stderr: a line redrawn in place on a terminal, and one line per finished
    # run anywhere else (a CI log, `| tee`), so a quarter of an hour of runs never looks like a hang.
    exec "$here/build/release/engine/lockbench" suite --out "$here/results" "${extra_run_args[@]}"
    ;;
  test)
    # Formatting is part of the contract (.clang-format); Debian 12's clang-format 14 decides.
    # The source folders, not git's index: a tarball or a machine without git checks the same.
    if ! find "$here"/{strategies,checker,engine,dashboard} \( -name '*.cpp' -o -name '*.hpp' \) -print0 |
        xargs -0 clang-format --dry-run --Werror; then
      echo "setup: clang-format found unformatted files (fix: clang-format -i FILE...)" >&2
      exit 1
    fi
    # The main job builds without tests: a CMake line that only works with them broke `setup.sh
    # run` once while every test passed. Configuring that build (seconds) catches it here.
    cmake -S "$here" -B "$here/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
      -DLOCKBENCH_BUILD_TESTS=OFF -DLOCKBENCH_BUILD_BENCHMARKS=OFF >/dev/null
    # -g1 (line tables: every frame of a failure's backtrace has its file:line) instead of -g:
    # a quarter less compile time on 2 cores, and no test reads a local variable's debug info.
    # CI's three builds compile each target's files in batches (LOCKBENCH_UNITY_BUILD: the code
    # nlohmann/json and GoogleTest instantiate is compiled once per batch, not once per file; the
    # fault classes under ASan took 17 s of CPU instead of 41 s); the Release build and a
    # developer's compile file by file and still catch a file that does not include what it uses.
    batched=-DLOCKBENCH_UNITY_BUILD=ON
    build test RelWithDebInfo -DLOCKBENCH_WERROR=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DLOCKBENCH_PRECOMPILE_HEADERS=ON -DLOCKBENCH_TEST_CXX_FLAGS=-O1 "$batched"
    CTEST_ARGS="-LE scenario|timing|topology ${CTEST_ARGS:-}" run_tests test "the tests"
    # The demonstrations race real timers (a pause past a lease) and the gate's own tests measure
    # the machine: they run on their own, after the rest.
    scenario_args="-L scenario|timing"
    if ((gate)); then
      # ScenarioTest runs every shipped scenario x strategy on embedded servers with the quick
      # suite's timing and asserts its expectation; --gate's quick suite below runs the same
      # pairs and the gate fails any other outcome. Asserted once there (about 3 minutes of CI).
      # On servers the test did not start, every scenario and every strategy runs at least once
      # (Shipped/ExternalScenarioTest, about a fifth of the pairs); the other pairs (ShippedRest/, about
      # 3 minutes more) only repeat on a user's servers a verdict the quick suite asserts. The
      # rest of the label (the stories, the timeline, the gate's machine measurements) runs here.
      scenario_args+=" -E /ScenarioTest\\.|^ShippedRest/"
    fi
    CTEST_ARGS="$scenario_args ${CTEST_ARGS:-}" run_tests test "the scenario and timing tests" "$jobs"
    if ((topology)); then
      CTEST_ARGS="-L topology ${CTEST_ARGS:-}" run_tests test "the topology tests" "$jobs"
    fi
    if ((fuzz)); then
      # libFuzzer is clang's: only the fuzzers and the libraries they need are built with it. A
      # crashing input is saved under build/fuzz/*/fuzz/fuzz-artifacts/ and named in the output.
      CC=clang CXX=clang++ cmake -S "$here" -B "$here/build/fuzz" -G Ninja \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKBENCH_BUILD_FUZZERS=ON \
        -DLOCKBENCH_FUZZ_SECONDS="${LOCKBENCH_FUZZ_SECONDS:-60}" -DLOCKBENCH_BUILD_TESTS=OFF \
        -DLOCKBENCH_BUILD_BENCHMARKS=OFF -DLOCKBENCH_BUILD_DASHBOARD=OFF >/dev/null
      cmake --build "$here/build/fuzz" -j "$jobs" --target lockbench_fuzzers
      # One fuzzer at a time: each uses a core of its own and reports its executions per second.
      (cd "$here/build/fuzz" && ctest -L fuzz --output-on-failure ${CTEST_ARGS:-})
    fi
    if ((sanitize)); then
      # Qt's own code is not instrumented; the dashboard is tested in the plain build only. The
      # demonstration scenarios (a pause past a lease) and the gate's machine measurements are
      # timing-based and run in the plain build, and so do the tests of hosts in network
      # namespaces (label netns: processes that fork namespace holders and servers); the
      # sanitizer builds run everything else, the engine's concurrency included. They do not
      # build the programs of the labels they skip, nor the benchmarks and the dashboard.
      local_only="-DLOCKBENCH_SKIP_TEST_LABELS=scenario;netns;topology"
      # The test programs' own files at -O0 under ASan: a third less compile time than -O1 for
      # a few seconds more of the brute-force cross-checks; the code under test stays -O1.
      build asan Asan -DLOCKBENCH_WERROR=ON -DLOCKBENCH_PRECOMPILE_HEADERS=ON -DLOCKBENCH_BUILD_BENCHMARKS=OFF -DLOCKBENCH_BUILD_DASHBOARD=OFF -DLOCKBENCH_TEST_CXX_FLAGS=-O0 "$local_only" "$batched"
      ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$here/scripts/lsan-suppressions.txt" UBSAN_OPTIONS=print_stacktrace=1 CTEST_ARGS="-LE scenario|timing|netns|topology|adapters ${CTEST_ARGS:-}" run_tests asan "the tests under ASan+UBSan"
      # Nor the tests of code with no threads but the search's pool, which linearizability_test
      # drives (label single_threaded): ThreadSanitizer has nothing to find there.
      build tsan Tsan -DLOCKBENCH_WERROR=ON -DLOCKBENCH_PRECOMPILE_HEADERS=ON -DLOCKBENCH_BUILD_BENCHMARKS=OFF -DLOCKBENCH_BUILD_DASHBOARD=OFF "$local_only;single_threaded" "$batched"
      # ManyWaiters is one key's search, on one thread (the search runs a thread per key): ten
      # times slower under TSan with nothing concurrent to check; ASan still runs it.
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$here/scripts/tsan-suppressions.txt" CTEST_ARGS="-LE scenario|timing|netns|topology|adapters -E ^ManyWaiters\\. ${CTEST_ARGS:-}" run_tests tsan "the tests under TSan"
    fi
    if ((gate)); then
      # The gate's suite stays in the build folder (replaced by the next run): after a failed
      # gate its stories and timelines show what happened, and after a passing one on a quiet
      # machine it is the new baseline (`lockbench gate --write-baseline results/baseline.json
      # --current build/test/gate-suite/suite-*`).
      gate_out=$here/build/test/gate-suite
      rm -rf "$gate_out"
      status=0
      # No second tries: an outcome that holds only on a retry is not the outcome. Without the
      # scenarios that start many servers (Sentinel, Cluster, ZooKeeper ensembles): they took half
      # of this suite's quarter of an hour, and belong to the opt-in label `topology` (--topology).
      timed "the quick suite" "$here/build/test/engine/lockbench" suite --quick --no-topology --out "$gate_out" || status=$?
      # An unexpected outcome (1) and a run that failed (2, 4, 5: its FAILED row) are judged by
      # the gate below, with its readable diff; a suite that wrote nothing is its own error.
      ((status != 130)) || exit 130  # interrupted: nothing to judge
      suite_dir=$(ls -d "$gate_out"/suite-* 2>/dev/null | tail -n 1 || true)
      [[ -n $suite_dir ]] || exit "$((status == 0 ? 1 : status))"
      gate_status=0
      "$here/build/test/engine/lockbench" gate --baseline "$here/results/baseline.json" \
        --current "$suite_dir" || gate_status=$?
      ((gate_status == 0)) || { echo "setup: the gate's suite, its stories and timelines: $suite_dir" >&2; exit "$gate_status"; }
      ((status == 0 || status == 1)) || exit "$status"
    fi
    ;;
esac
