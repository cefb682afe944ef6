#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing, builds, then either
# runs the default suite on an embedded redis-server or runs every test.
#
#   scripts/setup.sh run              # install, build (Release), run the default suite
#   scripts/setup.sh test             # install, build with warnings as errors, run every ctest
#   scripts/setup.sh test --sanitize  # ... then the same tests under ASan+UBSan and under TSan
#
# Environment: LOCKBENCH_JOBS (build parallelism, default: nproc), CTEST_ARGS (extra ctest args).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
mode=${1:-}
[[ $mode == run || $mode == test ]] || { usage >&2; exit 2; }
shift
sanitize=0
extra_run_args=()
while (($#)); do
  case $1 in
    --sanitize) sanitize=1 ;;
    -h|--help) usage; exit 0 ;;
    *) extra_run_args+=("$1") ;;
  esac
  shift
done

"$here/scripts/bootstrap.sh"

jobs=${LOCKBENCH_JOBS:-$(nproc)}
build() {  # build <dir> <cmake build type> [cmake args...]
  local dir=$1 type=$2; shift 2
  cmake -S "$here" -B "$here/build/$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
  cmake --build "$here/build/$dir" -j "$jobs"
}
run_tests() {  # run_tests <dir>
  # ctest's own summary line ("100% tests passed, 0 tests failed out of N") is what CI reads.
  (cd "$here/build/$1" && ctest --output-on-failure --timeout 600 -j "$jobs" ${CTEST_ARGS:-})
}

case $mode in
  run)
    build release Release -DLOCKBENCH_BUILD_TESTS=OFF -DLOCKBENCH_BUILD_BENCHMARKS=OFF
    # The default suite: the baseline scenario for every strategy on an embedded redis-server.
    # (`lockbench suite` will take this over.)
    status=0
    while read -r strategy _; do
      "$here/build/release/engine/lockbench" run "$here/workloads/baseline.json" \
        --strategy "$strategy" "${extra_run_args[@]}" || status=$?
    done < <("$here/build/release/engine/lockbench" strategies)
    exit $status
    ;;
  test)
    build test RelWithDebInfo -DLOCKBENCH_WERROR=ON
    run_tests test
    if ((sanitize)); then
      # Qt's own code is not instrumented; the dashboard is tested in the plain build only.
      build asan Asan -DLOCKBENCH_WERROR=ON -DLOCKBENCH_BUILD_BENCHMARKS=OFF -DLOCKBENCH_BUILD_DASHBOARD=OFF
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_tests asan
      build tsan Tsan -DLOCKBENCH_WERROR=ON -DLOCKBENCH_BUILD_BENCHMARKS=OFF -DLOCKBENCH_BUILD_DASHBOARD=OFF
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run_tests tsan
    fi
    ;;
esac
