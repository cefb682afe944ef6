#!/usr/bin/env bash
# What each lock costs the servers per cycle, every strategy in one run on this machine: the
# table README.md's performance section shows. Each strategy runs closed-loop with CLIENTS
# clients (default 50; lock libraries LIBRARY_CLIENTS, default 10: one adapter process each) on
# embedded servers lockbench starts (Redlock's three masters, ZooKeeper, etcd), on 100,000 keys
# (hardly any contention: nearly every attempt is a grant), holding for 0 ms, no fault. Printed
# per strategy from its summary.json: cycles/s, the servers' CPU per cycle by their own
# accounting (server_cost.total: every node of the run together, and per service), the engine's
# CPU per cycle, which side was the bottleneck, and the verdict. The servers' µs per cycle is
# what compares strategies; cycles/s here mostly measures this machine and the client side.
# Benchmarks, not tests: nothing is asserted.
#
#   engine/strategy_cost_bench.sh [path/to/lockbench] [seconds per run, default 5] [strategy...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lockbench=${1:-$here/build/release/engine/lockbench}
seconds=${2:-5}
shift $(($# > 2 ? 2 : $#))
[[ -x $lockbench ]] || { echo "strategy_cost_bench: no lockbench at $lockbench (build first)" >&2; exit 4; }

work=$(mktemp -d /tmp/lockbench-strategy-cost-XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

listing=$("$lockbench" strategies)
if (($# > 0)); then
  strategies=("$@")
else
  # Every strategy that has a server to measure (null-adapter has none).
  mapfile -t strategies < <(awk '$1 != "null-adapter" { print $1 }' <<< "$listing")
fi

printf '%-16s %8s %9s %10s %-30s %10s %-8s %s\n' strategy clients cycles/s "srv us/c" "per service" \
  "eng us/c" limit verdict
for strategy in "${strategies[@]}"; do
  clients=${CLIENTS:-50}
  library=$(awk -v s="$strategy" '$1 == s && / [0-9.]+[-a-z0-9.]*: / { print "yes" }' <<< "$listing")
  [[ $library == yes ]] && clients=${LIBRARY_CLIENTS:-10}
  status=0
  "$lockbench" run --strategy "$strategy" --clients "$clients" --keys 100000 --hold-ms 0 \
    --wait-ms 0 --resource none --duration "$seconds" --out "$work/results" --no-yardstick \
    --json > "$work/summary.json" 2> "$work/report.txt" || status=$?
  if ((status != 0 && status != 1 && status != 3)); then
    printf '%-16s %8s  failed (exit %d): %s\n' "$strategy" "$clients" "$status" \
      "$(grep -v '^\s*$' "$work/report.txt" | tail -1)"
    continue
  fi
  /usr/bin/python3 - "$strategy" "$clients" "$work/summary.json" <<'EOF'
import json, sys
strategy, clients, path = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(path))
cost = s.get("server_cost") or {}
total = cost.get("total") or {}
def us(value):
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"
services = {}
for node in cost.get("nodes") or []:
    if isinstance(node.get("cpu_us"), (int, float)):
        services[node["service"]] = services.get(node["service"], 0) + node["cpu_us"]
cycles = cost.get("cycles") or 0
per_service = " ".join(f"{name} {us(cpu / cycles)}" for name, cpu in sorted(services.items())) if cycles else "-"
engine = (cost.get("engine") or {}).get("cpu_us_per_cycle")
side = (cost.get("bottleneck") or {}).get("side", "-")
verdict = s.get("verdict") or {}
outcome = "valid" if verdict.get("valid") is True else "invalid" if verdict.get("valid") is False else "unknown"
print(f"{strategy:<16} {clients:>8} {s['throughput']['cycles_per_s']:>9.0f} "
      f"{us(total.get('cpu_us_per_cycle')):>10} {per_service:<30} {us(engine):>10} {side:<8} {outcome}")
EOF
  rm -rf "$work/results"
done
