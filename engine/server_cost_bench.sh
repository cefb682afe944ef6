#!/usr/bin/env bash
# Does the server cost lockbench reports (summary.json's server_cost) agree with what Redis does
# for redis-benchmark? One redis-server; redis-benchmark sends SET NX PX, then the EVALSHA
# release, at 50 connections, with Redis's own INFO (commandstats, cpu) read before and after
# each; then `lockbench run --strategy set_nx_px` at 50 clients against the same server. Printed
# per command: the usec_per_call Redis counted for each, and the server's CPU per command (the
# main thread, everything included: reading, parsing, replying) per lock cycle, and their ratio. Last, the
# server's whole cost per SET as redis-benchmark measures it at its limit: 1e6 / requests/s
# with 16 commands pipelined per connection, which keeps the server's one thread busy.
# Benchmarks, not tests: ratios are printed, never asserted (timings on a shared machine vary).
#
#   engine/server_cost_bench.sh [path/to/lockbench] [seconds per run, default 5]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lockbench=${1:-$here/build/release/engine/lockbench}
seconds=${2:-5}
[[ -x $lockbench ]] || { echo "server_cost_bench: no lockbench at $lockbench (build first)" >&2; exit 4; }
command -v redis-benchmark >/dev/null || { echo "server_cost_bench: redis-benchmark not found (redis-tools)" >&2; exit 4; }

work=$(mktemp -d /tmp/lockbench-server-cost-XXXXXX)
cleanup() {
  [[ -n ${redis_pid:-} ]] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no \
  --logfile "$work/redis.log" --daemonize no &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

release='if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0'
sha=$(redis-cli -p "$port" script load "$release")

# The server's counters for <command>: "calls usec main-thread-cpu-seconds" (the process's CPU
# before Redis 7, which names no main thread).
counters() {
  redis-cli -p "$port" info all | tr -d '\r' | awk -F'[:=,]' -v c="cmdstat_$1" '
    $1 == c { calls = $3; usec = $5 }
    $1 == "used_cpu_sys" { sys = $2 } $1 == "used_cpu_user" { user = $2 }
    $1 == "used_cpu_sys_main_thread" { msys = $2; main = 1 } $1 == "used_cpu_user_main_thread" { muser = $2 }
    END { printf "%d %d %.6f\n", calls, usec, (main ? msys + muser : sys + user) }'
}
# redis-benchmark at 50 connections, <command...>: "usec_per_call cpu_us_per_call" by Redis's own
# accounting over the benchmark.
benchmarked() {
  local name=$1; shift
  read -r c0 u0 t0 < <(counters "$name")
  redis-benchmark -p "$port" -c 50 -n 200000 -r 100000 -q "$@" > /dev/null
  read -r c1 u1 t1 < <(counters "$name")
  awk -v c="$((c1 - c0))" -v u="$((u1 - u0))" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "%.3f %.3f\n", u / c, (t1 - t0) * 1e6 / c }'
}

read -r set_usec set_cpu < <(benchmarked set set 'lock:__rand_int__' tok NX PX 30000)
read -r eval_usec eval_cpu < <(benchmarked evalsha evalsha "$sha" 1 'lock:__rand_int__' tok)

"$lockbench" run --redis "127.0.0.1:$port" --strategy set_nx_px --clients 50 --keys 100000 \
  --hold-ms 0 --wait-ms 0 --resource none --duration "$seconds" --out "$work/results" \
  --no-yardstick > "$work/run.txt" || (($? == 1 || $? == 3))
summary="$(ls -d "$work"/results/*/ | tail -1)summary.json"
read -r lb_set_usec lb_eval_usec lb_cpu lb_side < <(/usr/bin/python3 -c '
import json, sys
cost = json.load(open(sys.argv[1]))["server_cost"]
node = cost["nodes"][0]
calls = node["per_command"]
print(calls["set"]["usec_per_call"], calls["evalsha"]["usec_per_call"],
      (node["main_thread_cpu_us"] or node["cpu_us"]) / cost["cycles"], cost["bottleneck"]["side"])' "$summary")

pipelined_rps=$(redis-benchmark -p "$port" -c 50 -P 16 -n 1000000 -r 100000 --csv \
  set 'lock:__rand_int__' tok NX PX 30000 | tail -1 | cut -d, -f2 | tr -d '"')

echo "server cost, 50 connections: Redis's own accounting under redis-benchmark and under lockbench"
printf '%-34s %16s %16s %8s\n' '' redis-benchmark lockbench ratio
row() { awk -v n="$1" -v b="$2" -v l="$3" 'BEGIN { printf "%-34s %16.3f %16.3f %8.2f\n", n, b, l, (b > 0 ? l / b : 0) }'; }
row 'SET NX PX usec_per_call' "$set_usec" "$lb_set_usec"
row 'EVALSHA release usec_per_call' "$eval_usec" "$lb_eval_usec"
# A cycle is one SET and one EVALSHA (100,000 keys: an acquire almost never finds the lock held),
# so redis-benchmark's cycle costs the server what its SET and its EVALSHA each cost.
row 'main-thread CPU us per lock cycle' "$(awk -v a="$set_cpu" -v b="$eval_cpu" 'BEGIN { print a + b }')" "$lb_cpu"
awk -v r="$pipelined_rps" -v l="$lb_set_usec" 'BEGIN {
  printf "SET NX PX at redis-benchmark -P 16: %.0f/s = %.3f us of the server per command (whole cost)\n", r, 1e6 / r }'
echo "lockbench run's bottleneck: $lb_side"
