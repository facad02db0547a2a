#!/usr/bin/env bash
# The host backend's GPU-machine run: the host backend (CPUs only) next to PyTorch Gloo, on that machine's
# CPUs, in one go (under 8 minutes; every step has a timeout and a failing step does not stop the
# others):
#   1. a plain memory-bandwidth figure (scripts/gpu/stream_bw.c: copy, add, 4-input sum; 1 thread
#      and every CPU)
#   2. symmem launch -n 4 bench allreduce on the host backend (SYMMEM_BACKEND=host), fp32 sum,
#      4 KiB … 64 MiB, one-shot / two-shot / auto, RUNS times (3)
#   3. PyTorch Gloo, 4 processes, the same sizes, RUNS times (scripts/gpu/gloo_bench.py)
#   4. if time is left and EXTRAS is not 0: one thread per rank (SYMMEM_HOST_THREADS=1, what the worker pool brings), a
#      one-shot/two-shot sweep 64 KiB … 4 MiB (the crossover), and the bench's default bf16
#   5. LAST: the table with ratios and the issue's targets (scripts/gpu/host_summary.py)
# The machine has no Java: the runtime and the app come from scripts/gpu/pack.sh as
# .gpu/symmem-gpu.tar.xz (carry that path). Files go to $OUT (5 of them).
#   bash scripts/gpu/run-host.sh
#   EXTRAS=0 bash scripts/gpu/run-host.sh     # steps 1-3 and 5 only (about a minute)
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/symmem-host-XXXXXX)
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
RUNS=${RUNS:-3}
EXTRAS=${EXTRAS:-1}
SIZES=4KiB,64KiB,1MiB,16MiB,64MiB
SIZE_BYTES=4096,65536,1048576,16777216,67108864
# PyTorch lives in this venv on the GPU machine (as in run-nccl.sh); python3 on PATH otherwise.
PY=/opt/torch/.venv/bin/python
[[ -x $PY ]] || PY=$(command -v python3 || echo python3)
declare -a SUMMARY
note() { SUMMARY+=("$(printf '%-62s %s' "$1" "$2")"); }
step() { # step NAME TIMEOUT LOG cmd...: runs with a deadline, appends to LOG, records PASS/FAIL
  local name=$1 t=$2 log=$3; shift 3
  echo "=== $name ($(elapsed) s)" | tee -a "$OUT/$log"
  timeout -k 10 "$t" "$@" >>"$OUT/$log" 2>&1; local rc=$?
  tail -n 2 "$OUT/$log"
  note "$name" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")"
  return $rc
}

{
  echo "date: $(date -u +%FT%TZ)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "cpus: $(nproc) usable; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  lscpu 2>/dev/null | grep -E '^(Socket|Core|Thread|NUMA node|L2|L3)' ; free -g | head -2
  nvidia-smi -L 2>&1 | head -2; "$PY" -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1
} 2>&1 | tee "$OUT/misc.log"

. scripts/gpu/lib.sh
symmem_runtime
"$JAVA" -version 2>&1 | head -1 | tee -a "$OUT/misc.log"

# 1. memory bandwidth (C; numpy's single-threaded add if there is no compiler)
CC=$(command -v cc || command -v gcc || true)
if [[ -n $CC ]] && $CC -O2 -pthread scripts/gpu/stream_bw.c -o "$WORK/stream_bw" >>"$OUT/misc.log" 2>&1; then
  step "memory bandwidth (stream_bw, 1 and $(nproc) threads)" 120 misc.log "$WORK/stream_bw" "$(nproc)" 256
else
  step "memory bandwidth (numpy add, 1 thread; no C compiler)" 120 misc.log "$PY" -c '
import time, numpy as np
n = 64 << 20; a = np.ones(n, np.float32); b = np.ones(n, np.float32); c = np.empty_like(a)
best = min((lambda t0: (np.add(a, b, out=c), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
print(f"stream add   threads   1  {3 * 4 * n / best / 1e9:8.1f} GB/s  (numpy, 256 MiB per array)")'
fi
grep '^stream ' "$OUT/misc.log" > "$WORK/stream.log" 2>/dev/null

# 2. symmem, host backend (the machine has a GPU: the backend is named, not picked)
HOSTBENCH=(env SYMMEM_BACKEND=host "${SYMMEM[@]}" launch -n 4 bench allreduce)
for run in $(seq 1 "$RUNS"); do
  step "symmem host, 4 ranks, fp32 sum, run $run" 150 host.log "${HOSTBENCH[@]}" \
    --json "$WORK/host-run$run.json" --dtype fp32 --op sum --sizes $SIZES --algos one-shot,two-shot,auto
done

# 3. PyTorch Gloo, 4 processes
echo "=== gloo ($(elapsed) s)" >> "$OUT/misc.log"
step "PyTorch Gloo, 4 processes, fp32 sum, $RUNS runs" 240 gloo.log \
  bash -c '"$@" > "'"$WORK"'/gloo.jsonl"' _ "$PY" scripts/gpu/gloo_bench.py --world 4 --sizes $SIZE_BYTES --runs "$RUNS"
cat "$WORK/gloo.jsonl" >> "$OUT/gloo.log" 2>/dev/null

# 4. extras, while the time allows (a device command may run 10 minutes)
if [[ $EXTRAS != 0 ]] && (( $(elapsed) < 330 )); then
  step "symmem host, SYMMEM_HOST_THREADS=1 (no workers)" 120 host.log env SYMMEM_HOST_THREADS=1 \
    "${HOSTBENCH[@]}" --json "$WORK/host-threads1.json" --dtype fp32 --op sum --sizes $SIZES --algos auto
fi
if [[ $EXTRAS != 0 ]] && (( $(elapsed) < 400 )); then
  step "symmem host, one-shot/two-shot sweep (crossover)" 120 host.log "${HOSTBENCH[@]}" \
    --json "$WORK/host-crossover.json" --dtype fp32 --op sum \
    --sizes 64KiB,128KiB,256KiB,512KiB,1MiB,2MiB,4MiB --algos one-shot,two-shot,auto
fi
if [[ $EXTRAS != 0 ]] && (( $(elapsed) < 450 )); then
  step "symmem host, bench defaults (bf16 sum)" 90 host.log "${HOSTBENCH[@]}" \
    --json "$WORK/host-bf16.json" --sizes 4KiB,1MiB,64MiB
fi

# 5. the table (also kept as summary.txt), and every JSON in one file
"$PY" scripts/gpu/host_summary.py "$WORK" "$OUT/results.json" 2>&1 | tee "$OUT/summary.txt"
echo
echo "===== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}" | tee -a "$OUT/summary.txt"
rm -rf "$WORK"
