#!/usr/bin/env bash
# The NCCL GPU-machine run (loading, the communicator surface, the symmetric backend), in one go, about 3-5 minutes:
#   1. which NCCL the Java app finds by itself (python3 on PATH = /opt/torch/.venv: the pip wheel),
#      the system one through SYMMEM_NCCL_LIBRARY, and the "not found" message for a wrong path
#   2. world 1: every collective x dtype x op x size (1, 7, 4099, 1000003) against a float64
#      reference through the Java API (nccl-check correctness)
#   3. world 1: the abort test (a world-2 init whose rank 1 never comes ends at its deadline; the same
#      cut short by NativeCore.abort; a new world-1 communicator works after each)
#   4. allReduce bf16 sum latency 4 KiB..256 MiB from Java beside torch.cuda.nccl and
#      torch.distributed (world 1: NCCL's all-reduce is a device copy, so this compares per-call
#      overheads, not communication)
#   5. with 2 or more GPUs: the same correctness, the collective-deadline test (rank 1 skips an
#      allReduce) and the bench at world 2, one GPU per rank (NCCL refuses two ranks on one GPU)
#   6. native: test_nccl_fake (loader and deadline logic against a fake libnccl) and test_nccl_gpu
#      (the nccl backend and windows on the real NCCL: ncclMemAlloc buffers, symmem's and NCCL's
#      all-reduce on them, free refused while registered, 200 cycles, abort, NCCL's "no window")
#   7. the symmetric backend from the app: demo with SYMMEM_BACKEND=nccl, and bench allreduce --nccl
#      (bf16 sum, 4 KiB..256 MiB) on the cuda and on the nccl backend: symmem's kernels on cuda memory
#      and on ncclMemAlloc memory, NCCL plain and on a symmetric window, all from Java
#   8. LAST: a table of the steps and the latencies side by side
# The machine has no Java: carry .gpu/symmem-gpu.tar.xz made by scripts/gpu/pack.sh.
#   bash scripts/gpu/run-nccl.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
# NVLink multicast must never be used on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
# The venv's python3 first on PATH: the app must find PyTorch's pip NCCL through it, unaided.
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
unset SYMMEM_NCCL_LIBRARY
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=64
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-nccl-build}
NGPU=$(gpu_count)

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
  ldconfig -p 2>/dev/null | grep libnccl.so.2
  env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS)='
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 6 (in the background, CPU): the native build for test_nccl_fake.
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 --target test_nccl_fake test_nccl_gpu ) > "$OUT/native.log" 2>&1 &
BUILD_PID=$!

# 1. finding NCCL
step "info: NCCL found unaided (expect the pip wheel)" 60 info.log "${SYMMEM[@]}" nccl-check info
SYSTEM_NCCL=$(ldconfig -p 2>/dev/null | awk '/libnccl.so.2 .*x86-64/ {print $NF; exit}')
if [[ -n $SYSTEM_NCCL ]]; then
  SYMMEM_NCCL_LIBRARY=$SYSTEM_NCCL step "info: SYMMEM_NCCL_LIBRARY=$SYSTEM_NCCL" 60 info.log "${SYMMEM[@]}" nccl-check info
fi
step "info: a wrong SYMMEM_NCCL_LIBRARY fails naming it" 60 info.log bash -c \
  'out=$(SYMMEM_NCCL_LIBRARY=/nonexistent/libnccl.so.2 "$@" nccl-check info 2>&1); rc=$?; echo "$out"; [[ $rc != 0 ]] && grep -q "/nonexistent/libnccl.so.2 \[SYMMEM_NCCL_LIBRARY\]: no such file" <<<"$out"' _ "${SYMMEM[@]}"

export SYMMEM_BACKEND=cuda MASTER_PORT=29641
# 2-4. world 1
step "world 1: correctness, 5 collectives x 8 dtypes x ops x 4 sizes" 200 world1.log "${SYMMEM[@]}" nccl-check correctness
step "world 1: abort (init deadline 5 s, NativeCore.abort, recovery)" 90 world1.log "${SYMMEM[@]}" nccl-check abort --deadline-ms 5000
step "world 1: bench allReduce bf16 (Java)" 120 bench.log "${SYMMEM[@]}" nccl-check bench
unset SYMMEM_BACKEND
step "world 1: bench torch.cuda.nccl + torch.distributed" 120 bench.log python3 scripts/gpu/nccl_torch_bench.py

# 5. world 2, one GPU per rank
if (( NGPU >= 2 )); then
  export SYMMEM_BACKEND=cuda
  step "world 2: correctness (launch -n 2)" 240 world2.log "${SYMMEM[@]}" launch -n 2 nccl-check correctness
  step "world 2: collective deadline (rank 1 skips an allReduce) + recovery" 120 world2.log "${SYMMEM[@]}" launch -n 2 nccl-check hang --deadline-ms 3000
  step "world 2: bench allReduce bf16 (Java)" 150 bench2.log "${SYMMEM[@]}" launch -n 2 nccl-check bench
  unset SYMMEM_BACKEND
  step "world 2: bench torch.distributed (torchrun)" 150 bench2.log torchrun --nproc-per-node=2 scripts/gpu/nccl_torch_bench.py
else
  note "world 2" "SKIPPED (1 GPU: NCCL refuses two ranks on one GPU)"
fi

wait "$BUILD_PID"; rc=$?
note "native build of test_nccl_fake" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
[[ $rc == 0 ]] && step "native test_nccl_fake (loader, deadlines, aborts)" 120 native.log "$B/tests/test_nccl_fake"
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2)
[[ $rc == 0 ]] && SYMMEM_TEST_NCCL_LIB=$PIP_NCCL step "native test_nccl_gpu (nccl backend + windows, world $(( NGPU >= 2 ? 2 : 1 )))" 240 native.log "$B/tests/test_nccl_gpu"

# 7. the symmetric backend from the app (world 1 here; world 2 with 2 GPUs)
W=$(( NGPU >= 2 ? 2 : 1 ))
export MASTER_PORT=29651
SYMMEM_BACKEND=nccl step "nccl backend: demo (launch -n $W)" 180 symm.log "${SYMMEM[@]}" launch -n "$W" demo
SYMMEM_BACKEND=nccl step "nccl backend: a wrong SYMMEM_NCCL_LIBRARY stops the rank naming it" 60 symm.log bash -c \
  'out=$(SYMMEM_NCCL_LIBRARY=/nonexistent/libnccl.so.2 "$@" launch -n 1 demo 2>&1); rc=$?; echo "$out"; [[ $rc != 0 ]] && grep -q "SYMMEM_BACKEND=nccl: NCCL (libnccl.so.2) not found" <<<"$out"' _ "${SYMMEM[@]}"
for be in cuda nccl; do
  SYMMEM_BACKEND=$be step "bench allreduce --nccl on the $be backend (world $W)" 300 symm.log \
    "${SYMMEM[@]}" launch -n "$W" bench allreduce --nccl --dtype bf16 --min-size 4KiB --max-size 256MiB --json "$OUT/symm-$be.json"
done

# 7. last: the table.
{
  echo "===== NCCL found"; grep -h "^nccl \|not found" "$OUT/info.log" | head -4
  echo "===== world 1"; grep -hE "PASS|FAIL|correctness:" "$OUT/world1.log" | head -20
  [[ -f $OUT/world2.log ]] && { echo "===== world 2"; grep -hE "PASS|FAIL|correctness:" "$OUT/world2.log" | head -20; }
  for f in bench.log bench2.log; do
    [[ -f $OUT/$f ]] || continue
    echo "===== allReduce bf16 sum, us per op ($f; JAVA-NCCL out of place, -IP and torch.cuda.nccl in place)"
    python3 - "$OUT/$f" <<'PY'
import sys, collections
t = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and p[0] in ("JAVA-NCCL", "JAVA-NCCL-IP", "TORCH-CUDA-NCCL", "TORCH-DIST-NCCL"):
        t[int(p[1])][p[0]] = float(p[2])
cols = ["JAVA-NCCL", "JAVA-NCCL-IP", "TORCH-CUDA-NCCL", "TORCH-DIST-NCCL"]
print("%12s" % "bytes" + "".join("%18s" % c for c in cols))
for b in sorted(t):
    print("%12d" % b + "".join("%18s" % ("%.2f" % t[b][c] if c in t[b] else "-") for c in cols))
PY
  done
  if [[ -f $OUT/symm-cuda.json && -f $OUT/symm-nccl.json ]]; then
    echo "===== allReduce bf16 sum through the Java API, us per op (world $W; symmem's best algorithm, out of place; NCCL in place)"
    python3 - "$OUT/symm-cuda.json" "$OUT/symm-nccl.json" <<'PY'
import json, sys
cuda, nccl = (json.load(open(f)) for f in sys.argv[1:3])
def best(r):
    v = [r[k] for k in ("one_shot_us", "two_shot_us", "auto_us") if r.get(k) is not None]
    return min(v) if v else float("nan")
print("%12s %14s %14s %9s %12s %14s %14s %14s" % ("bytes", "ours cuda", "ours nccl-mem", "ratio", "nccl plain", "nccl window",
      "nccl plain*", "nccl window*"))
for a, b in zip(cuda["allreduce"], nccl["allreduce"]):
    oc, on = best(a), best(b)
    print("%12d %14.2f %14.2f %9.3f %12.2f %14.2f %14.2f %14.2f" % (a["bytes"], oc, on, on / oc, a["nccl_us"], a["nccl_window_us"],
          b["nccl_us"], b["nccl_window_us"]))
print("ratio = ours on ncclMemAlloc memory / ours on cuda memory; nccl columns from the cuda run (window = the cuda buffer"
      " registered), * = from the nccl run (window = the ncclMemAlloc buffer)")
PY
  fi
  echo "===== steps ($(elapsed) s in all)"; printf '%s\n' "${SUMMARY[@]}"
} 2>&1 | tee "$OUT/summary.txt"
