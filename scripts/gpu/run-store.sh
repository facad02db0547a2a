#!/usr/bin/env bash
# The store issue's whole GPU-machine run, in one go (the machine has no Java: the runtime and the app
# come packed by scripts/gpu/pack.sh as .gpu/symmem-gpu.tar.xz; carry that path in the device run):
#   1. symmem's store server (Java), PyTorch TCPStore clients against it: store_compat.py, both modes
#   2. NCCL init_process_group + all_reduce + symm_mem rendezvous, 4 GPUs, through symmem's store
#   3. symmem's Java client against PyTorch TCPStore servers (libuv and legacy): symmem store-check;
#      symmem ranks rendezvous through PyTorch's TCPStore (SYMMEM_STORE_HOST=tcpstore)
#   4. symmem bench store against symmem's server and against PyTorch's; tcpstore_bench.py (Python
#      clients) against both; torchrun torch_anchor.py for the reference figures
# Logs go to $OUT (or ./gpu-out), at most 8 files (what a device run brings back); a short table comes last. Every step has a timeout.
#   scripts/gpu/run-store.sh [quick]     # quick: smaller bench (no 1024 level), no anchor
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
MODE=${1:-full}
. scripts/gpu/lib.sh
symmem_runtime
G=scripts/gpu
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
declare -a SUMMARY PIDS
note() { SUMMARY+=("$1"); }
step() { # step NAME TIMEOUT LOG cmd...: runs, records PASS/FAIL with the rc
  local name=$1 t=$2 log=$3; shift 3
  echo "=== $name" | tee -a "$OUT/$log"
  timeout "$t" "$@" >>"$OUT/$log" 2>&1; local rc=$?
  tail -n 3 "$OUT/$log"
  note "$(printf '%-52s %s' "$name" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")")"
}
cleanup() { for p in "${PIDS[@]:-}"; do [[ -n $p ]] && kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

{
  echo "date: $(date -u +%FT%TZ)"; nproc; nvidia-smi -L 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count(), "nccl", torch.cuda.nccl.version())'
  "$JAVA" -version 2>&1 | head -1; ulimit -n
} 2>&1 | tee "$OUT/misc.log"

OURS=29600; TLIBUV=29700; TLEGACY=29701
"${SYMMEM[@]}" bench store --serve-only --port $OURS --serve-for 1200 >>"$OUT/misc.log" 2>&1 &
PIDS+=($!)
python3 -c "
import sys, time, datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', int(sys.argv[1]), is_master=True, wait_for_workers=False, use_libuv=sys.argv[2] == '1', timeout=datetime.timedelta(seconds=60))
print('TCPStore server up, use_libuv', sys.argv[2], flush=True); time.sleep(1200)" $TLIBUV 1 >>"$OUT/misc.log" 2>&1 &
PIDS+=($!)
python3 -c "
import sys, time, datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', int(sys.argv[1]), is_master=True, wait_for_workers=False, use_libuv=sys.argv[2] == '1', timeout=datetime.timedelta(seconds=60))
print('TCPStore server up, use_libuv', sys.argv[2], flush=True); time.sleep(1200)" $TLEGACY 0 >>"$OUT/misc.log" 2>&1 &
PIDS+=($!)
wait_port $OURS || note "symmem server did not come up"; wait_port $TLIBUV || note "TCPStore libuv server did not come up"
wait_port $TLEGACY || note "TCPStore legacy server did not come up"

step "store_compat.py (PyTorch clients) vs symmem server" 120 compat.log python3 $G/store_compat.py --port $OURS --modes libuv,legacy
step "store_compat.py vs PyTorch TCPStore libuv (reference)" 120 compat.log python3 $G/store_compat.py --port $TLIBUV --modes libuv,legacy
step "NCCL + symm_mem, 4 ranks, via symmem server" 180 nccl.log python3 $G/nccl_over_symmem_store.py --port $OURS --world "$(python3 -c 'import torch; print(min(4, torch.cuda.device_count()))')"
step "symmem store-check vs TCPStore server (libuv)" 120 store-check.log "${SYMMEM[@]}" store-check --port $TLIBUV
# exit 3: nothing failed, the legacy server does not do queues (it closes the connection on them)
step "symmem store-check vs TCPStore server (legacy)" 120 store-check.log bash -c '"$@"; rc=$?; [[ $rc == 3 ]] && echo "queue checks unsupported by the legacy server (exit 3)" && rc=0; exit $rc' _ "${SYMMEM[@]}" store-check --port $TLEGACY
step "symmem store-check vs symmem server" 120 store-check.log "${SYMMEM[@]}" store-check --port $OURS
# symmem ranks (4, one per GPU) rendezvous through PyTorch's own TCPStore server, as a sidecar next
# to a torch job would: SYMMEM_STORE_HOST=tcpstore, keys under this run's id
step "symmem launch -n 4 demo through PyTorch's TCPStore" 180 store-check.log env SYMMEM_STORE_HOST=tcpstore \
  SYMMEM_RUN_ID=gpu-$$ SYMMEM_HTTP_PORT=28700 "${SYMMEM[@]}" launch -n 4 --master-port $TLIBUV demo --sizes 4KiB,1MiB --min-time-ms 50

if [[ $MODE == quick ]]; then LEVELS=1,4,64; RANKS=256; else LEVELS=1,4,64,1024; RANKS=1024; fi
step "bench store: Java clients vs symmem server" 150 bench.log "${SYMMEM[@]}" bench store --host 127.0.0.1 --port $OURS --label symmem --pipeline --clients $LEVELS --ranks $RANKS --rounds 1 --all-gather-timeout-seconds 60 --deadline-seconds 100 --phase-seconds 10 --json "$OUT/bench-symmem.json"
# 1,4,64 and 256 ranks only: 1024 connections to a TCPStore server took minutes on the 2-core machine
step "bench store: Java clients vs TCPStore libuv" 150 bench.log "${SYMMEM[@]}" bench store --host 127.0.0.1 --port $TLIBUV --label tcpstore-libuv --clients 1,4,64 --ranks 256 --rounds 1 --all-gather-timeout-seconds 60 --deadline-seconds 100 --phase-seconds 10 --json "$OUT/bench-tcpstore.json"
step "tcpstore_bench.py (Python clients) vs symmem" 90 ref.log python3 $G/tcpstore_bench.py --port $OURS --clients 1,4,64 --label symmem
step "tcpstore_bench.py (Python clients) vs TCPStore libuv" 90 ref.log python3 $G/tcpstore_bench.py --port $TLIBUV --clients 1,4,64 --label tcpstore-libuv
if [[ $MODE != quick && -f $PKG/torch_anchor.py ]]; then
  step "torchrun torch_anchor.py (reference)" 120 ref.log torchrun --nproc-per-node=4 "$PKG/torch_anchor.py"
fi

echo; echo "===== compat (PyTorch clients vs symmem server)"; grep -E "^-- |FAIL|CLIENT-NI|ABSENT|passed" "$OUT/compat.log"
echo "===== store-check (symmem client)"; grep -E "^symmem store-check|FAIL|UNSUPPORTED|passed|\[0\] (PASS|symmem all-reduce)|ranks exited" "$OUT/store-check.log"
echo "===== bench"; grep -E "^ +[0-9]+ (set|get|add)|all_gather|MET|MISSED|^symmem bench" "$OUT/bench.log"
echo "===== python clients"; grep -E "^TCPStore clients|^ +[0-9]+ (set|get|add)" "$OUT/ref.log"
echo "===== anchor"; grep -E "TCPStore,|barrier|bytes=" "$OUT/ref.log"
echo "===== summary"; printf '%s\n' "${SUMMARY[@]}"
