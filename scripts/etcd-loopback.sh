#!/usr/bin/env bash
# Starts a three-member etcd cluster on loopback (ports 23790-23795, data under $1 or a temp dir) and
# prints the SYMMEM_STORE value for it; stop it with `kill $(cat DIR/pids)`. For benchmarks and trying
# the store on etcd by hand (the tests start their own clusters: EtcdCluster).
set -euo pipefail
dir="${1:-$(mktemp -d /tmp/symmem-etcd.XXXXXX)}"
mkdir -p "$dir"
cluster="m0=http://127.0.0.1:23791,m1=http://127.0.0.1:23793,m2=http://127.0.0.1:23795"
: > "$dir/pids"
for i in 0 1 2; do
  c=$((23790 + 2 * i)); p=$((c + 1))
  etcd --name "m$i" --data-dir "$dir/m$i" --listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
    --listen-peer-urls "http://127.0.0.1:$p" --initial-advertise-peer-urls "http://127.0.0.1:$p" \
    --initial-cluster "$cluster" --initial-cluster-token "symmem-loopback-$$" --initial-cluster-state new \
    --logger zap --log-level warn > "$dir/m$i.log" 2>&1 &
  echo $! >> "$dir/pids"
done
for i in 0 1 2; do
  c=$((23790 + 2 * i))
  for _ in $(seq 1 300); do
    curl -fs "http://127.0.0.1:$c/health" 2>/dev/null | grep -q '"true"' && break
    sleep 0.1
  done
  curl -fs "http://127.0.0.1:$c/health" | grep -q '"true"' || { echo "etcd member m$i not healthy: see $dir/m$i.log" >&2; exit 1; }
done
echo "SYMMEM_STORE=etcd://127.0.0.1:23790,127.0.0.1:23792,127.0.0.1:23794/bench (pids in $dir/pids)"
