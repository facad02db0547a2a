#!/usr/bin/env bash
# Store round-trip latency on the GPU machine, by how the server's event loop and the client wait:
# server transport (Vert.x NIO or Netty epoll) x server poll window x client poll window, each
# setting RUNS times (get mean µs at 1 and 4 clients, Java blocking clients, server in its own JVM),
# next to PyTorch's TCPStore (libuv server, Python clients: tcpstore_bench.py) measured in the same call.
#   OUT=$OUT bash scripts/gpu/store-latency.sh        # carry .gpu/symmem-gpu.tar.xz (scripts/gpu/pack.sh)
# Env: RUNS (3), SERVER_SPINS ("0 50"), CLIENT_SPINS ("0 50"), TRANSPORTS ("nio epoll"), OPS (20000).
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONWARNINGS=ignore
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
. scripts/gpu/lib.sh
symmem_runtime
RUNS=${RUNS:-3}; OPS=${OPS:-20000}
LOG=$OUT/latency.log; TABLE=$OUT/latency-table.txt
ulimit -n 65536 2>/dev/null || true
# "1 get" and "4 get" means from one bench run's output
means() { awk '$2=="get" && ($1=="1" || $1=="4") {printf "%s ", $4}' "$1"; }
{ echo "date: $(date -u +%FT%TZ) cores: $(nproc) commit: $(git rev-parse --short HEAD 2>/dev/null)"; uname -r; } | tee "$TABLE"
printf '%-6s %-12s %-12s %s\n' transport server-spin client-spin "get mean µs at 1 / 4 clients, one pair per run" | tee -a "$TABLE"
port=29800
for transport in ${TRANSPORTS:-nio epoll}; do
  native=false; [[ $transport == epoll ]] && native=true
  for sspin in ${SERVER_SPINS:-0 50}; do
    port=$((port + 1))
    QUARKUS_VERTX_PREFER_NATIVE_TRANSPORT=$native SYMMEM_STORE_SERVER_SPIN_MICROS=$sspin \
      "${SYMMEM[@]}" bench store --serve-only --port $port --serve-for 600 >>"$LOG" 2>&1 &
    server=$!
    wait_port $port || { echo "server $transport/$sspin did not come up" | tee -a "$TABLE"; kill $server; continue; }
    # Warm the fresh server JVM up (JIT) before anything is timed; the runs below warm only their clients.
    "${SYMMEM[@]}" bench store --host 127.0.0.1 --port $port --pipeline --clients 4 --ranks 0 --ops 4000 >>"$LOG" 2>&1
    for cspin in ${CLIENT_SPINS:-0 50}; do
      row=""
      for run in $(seq 1 "$RUNS"); do
        echo "=== $transport server-spin $sspin client-spin $cspin run $run" >>"$LOG"
        SYMMEM_STORE_SPIN_MICROS=$cspin timeout 120 "${SYMMEM[@]}" bench store --host 127.0.0.1 --port $port --pipeline \
          --clients 1,4 --ranks 0 --ops "$OPS" --warmup-ops 5000 >"$OUT/run.tmp" 2>&1
        cat "$OUT/run.tmp" >>"$LOG"
        row+="$(means "$OUT/run.tmp")| "
      done
      printf '%-9s %-12s %-12s %s\n' $transport $sspin $cspin "$row" | tee -a "$TABLE"
    done
    kill $server; wait $server 2>/dev/null
  done
done
rm -f "$OUT/run.tmp"
# Anchor in the same call: PyTorch's TCPStore (libuv server, Python clients), RUNS times.
TPORT=29790
python3 -c "
import sys, time, datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', int(sys.argv[1]), is_master=True, wait_for_workers=False, use_libuv=True, timeout=datetime.timedelta(seconds=60))
print('TCPStore server up', flush=True); time.sleep(600)" $TPORT >>"$LOG" 2>&1 &
tserver=$!
wait_port $TPORT
row=""
for run in $(seq 1 "$RUNS"); do
  timeout 120 python3 scripts/gpu/tcpstore_bench.py --port $TPORT --clients 1,4 --ops "$OPS" --label tcpstore-libuv >"$OUT/run.tmp" 2>&1
  cat "$OUT/run.tmp" >>"$LOG"
  row+="$(means "$OUT/run.tmp")| "
done
printf '%-9s %-12s %-12s %s\n' TCPStore libuv python "$row" | tee -a "$TABLE"
kill $tserver 2>/dev/null; rm -f "$OUT/run.tmp"
echo; cat "$TABLE"
