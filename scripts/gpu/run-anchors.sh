#!/usr/bin/env bash
# Every all-reduce anchor in one device run (issue 31, item 5), bf16 sum, world 2 (WORLD=N for more),
# one table of ratios printed last. At most BUDGET_S (default 530) seconds: every step's deadline is cut
# to what is left, a step that fails or runs out is recorded and the run goes on.
#   1. native build in the background (nice, -j16, only the three benches + libsymmem)
#      while ours from Java runs: `symmem launch -n W bench allreduce` (one-shot, two-shot, auto, out of
#      place, System.nanoTime) with SYMMEM_BACKEND=cuda, nvshmem and nccl (our kernels on cudaMalloc'ed
#      IPC memory, on NVSHMEM's heap, on ncclMemAlloc memory)
#   2. ours native: symmem_bench --backend cuda (every power of two 4 KiB..256 MiB; one-shot, two-shot,
#      in place and out of place, auto, and what AUTO picks: the crossover columns; CUDA events)
#   3. NCCL's own C loop: symmem_nccl_bench (ncclAllReduce on plain cudaMalloc memory and on
#      NCCL_WIN_COLL_SYMMETRIC windows, in place and out of place; its "abi" lines are symmem's C ABI
#      call of NCCL, not an anchor); then symmem_movers_bench (broadcast, all-to-all, MoE all-to-all-v,
#      put and a signalled round trip beside NCCL's own; run-movers.sh adds PyTorch's all_to_all_vdev)
#   4. PyTorch symm_mem, CUDA then NVSHMEM (TORCH_SYMMMEM=NVSHMEM): torchrun torch_anchor.py
#      (one_shot_all_reduce, two_shot_all_reduce_, and NCCL through torch, shown as information only)
#   5. ours native on NVSHMEM's heap: symmem_bench --backend nvshmem (the pip wheel's library)
#   6. with time left, a second run of 2, 4 and 5 (best per cell, counted in the table's header)
#   7. LAST: the steps, then scripts/gpu/anchors_summary.py: every column per size, ours (native) /
#      the best anchor against the issue's goals, bus bandwidth at 256 MiB, AUTO's crossovers
# AUTO runs as shipped: the SYMMEM_CUDA_TWO_SHOT_* overrides are unset.
# The machine has no Java: carry .gpu/symmem-gpu.tar.xz (scripts/gpu/pack.sh; it holds the app and
# torch_anchor.py). Without it the Java and PyTorch steps are skipped, the rest runs.
# Files in $OUT (8): machine.txt, native.log (build), java.log, bench-native.txt (symmem_bench and
# nccl_bench), movers.txt, torch.log, results.json (the JSON of the Java and PyTorch runs), summary.txt.
#   bash scripts/gpu/run-anchors.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# NVLink multicast must never be used on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
# The venv's python3 first: the app finds PyTorch's pip NCCL and NVSHMEM through it.
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
unset SYMMEM_NCCL_LIBRARY SYMMEM_CUDA_TWO_SHOT_MIN_BYTES SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/json"
T0=$(date +%s)
BUDGET=${BUDGET_S:-530}
STEP_WIDTH=66
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-anchors-build}
NGPU=$(gpu_count)
WORLD=${WORLD:-2}
if (( NGPU < WORLD )); then
  note "world $WORLD" "LOWERED to $NGPU (the GPUs here; NCCL refuses two ranks on one GPU)"
  WORLD=$NGPU
fi
# The anchors' sizes (the native bench runs every power of two besides).
KSIZES=4K,16K,64K,256K,512K,1M,2M,4M,8M,16M,64M,256M
JSIZES=${KSIZES//K/KiB}; JSIZES=${JSIZES//M/MiB}
BSIZES=
for s in ${KSIZES//,/ }; do
  case $s in *K) b=$(( ${s%K} << 10 )) ;; *M) b=$(( ${s%M} << 20 )) ;; *) b=$s ;; esac
  BSIZES+=${BSIZES:+,}$b
done

# 1. the native build, in the background (CPU only; nice, so that the Java ranks keep their cores).
# PREBUILT=DIR (a folder with libsymmem.so, symmem_bench and symmem_nccl_bench built elsewhere for
# this machine's CUDA, carried with the run) skips it: the benches then run from DIR.
BENCH_ENV=()
if [[ -n ${PREBUILT:-} ]]; then
  use_prebuilt "$PREBUILT" libsymmem.so symmem_bench symmem_nccl_bench > "$OUT/native.log" 2>&1
  ( exit $? ) &  # its status stands in for the build's, waited for below
else
  ( timeout -k 5 240 nice -n 10 bash -c "$(native_build_cmd "$B" symmem_bench symmem_nccl_bench symmem_movers_bench)" ) > "$OUT/native.log" 2>&1 &
fi
BUILD_PID=$!

HAVE_APP=0
if [[ -f .gpu/symmem-gpu.tar.xz || -x .gpu/jre/bin/java || -x ${PKG:-/tmp/symmem-gpu}/jre/bin/java ]]; then
  symmem_runtime
  HAVE_APP=1
fi
ANCHOR=${ANCHOR:-${PKG:-/nonexistent}/torch_anchor.py}
[[ -f $ANCHOR ]] || ANCHOR=shared/bench/torch_anchor.py
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null \
  || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2)
PIP_NVSHMEM=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null \
  || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem)
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $WORLD  commit: $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1; nvidia-smi topo -m 2>&1 | head -4
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
  echo "pip NCCL: $PIP_NCCL"; echo "pip NVSHMEM: $PIP_NVSHMEM"; echo "anchor: $ANCHOR"
  env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS|SYMMEM_DISABLE_MULTICAST)='
  # AUTO's switch points as the app reports them (range, default, set or not).
  (( HAVE_APP )) && timeout 30 "${SYMMEM[@]}" config 2>&1 | grep -aE "^SYMMEM_CUDA_(TWO_SHOT|ONE_SHOT|PUSH)" | cut -c1-160
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 1. ours from Java, one backend after the other (launch's rank 0 binds a free store port).
if (( HAVE_APP )); then
  for be in cuda nvshmem nccl; do
    SYMMEM_BACKEND=$be qstep "ours Java: bench allreduce, $be backend (world $WORLD)" 100 java.log \
      "${SYMMEM[@]}" launch -n "$WORLD" bench allreduce --sizes "$JSIZES" --json "$OUT/json/java-$be.json"
  done
else
  note "ours Java (cuda, nvshmem, nccl)" "NOT RUN (no .gpu/symmem-gpu.tar.xz: scripts/gpu/pack.sh)"
fi

wait "$BUILD_PID"; rc=$?
note "native build (symmem_bench, symmem_nccl_bench), done at $(elapsed) s" \
  "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
[[ $rc == 0 ]] || grep -aE "error|Error" "$OUT/native.log" | head -10
BUILT=$(( rc == 0 ))

native_cuda() { qstep "ours native: symmem_bench, cuda backend (world $WORLD)$1" 90 bench-native.txt "${BENCH_ENV[@]}" "$B/symmem_bench" --world "$WORLD" --backend cuda; }
native_nvshmem() {
  SYMMEM_TEST_NVSHMEM_LIB=$PIP_NVSHMEM/lib/libnvshmem_host.so.3 qstep "ours native: symmem_bench, nvshmem backend (world $WORLD)$1" 120 \
    bench-native.txt "${BENCH_ENV[@]}" "$B/symmem_bench" --world "$WORLD" --backend nvshmem
}
torch_run() { # torch_run cuda|nvshmem PORT [ROUND]
  local env=() json=$OUT/json/torch-$1${3:+-$3}.json
  [[ $1 == nvshmem ]] && env=(env TORCH_SYMMMEM=NVSHMEM)
  qstep "PyTorch symm_mem $1 + NCCL (torch_anchor.py, world $WORLD)${3:+, run $3}" 120 torch.log \
    "${env[@]}" torchrun --nproc-per-node="$WORLD" --master-port "$2" "$ANCHOR" --sizes "$BSIZES" --json "$json"
}
HAVE_TORCH=$([[ -f $ANCHOR ]] && python3 -c 'import torch' 2>/dev/null && echo 1 || echo 0)

# 2-5.
(( BUILT )) && native_cuda ""
(( BUILT )) && SYMMEM_TEST_NCCL_LIB=$PIP_NCCL qstep "NCCL's own C loop: symmem_nccl_bench, plain + window (world $WORLD)" 150 \
  bench-native.txt "${BENCH_ENV[@]}" "$B/symmem_nccl_bench" --world "$WORLD" --sizes "$KSIZES"
# The data movers beside NCCL's (broadcast, all-to-all, MoE all-to-all-v, put, round trip; run-movers.sh
# prints their table): when the build has the bench.
(( BUILT )) && [[ -x $B/symmem_movers_bench ]] && SYMMEM_TEST_NCCL_LIB=$PIP_NCCL qstep \
  "movers beside NCCL's: symmem_movers_bench (world $WORLD)" 150 movers.txt "${BENCH_ENV[@]}" "$B/symmem_movers_bench" \
  --world "$WORLD" --sizes "$KSIZES"
if (( HAVE_TORCH )); then
  torch_run cuda 29711
  torch_run nvshmem 29712
else
  note "PyTorch symm_mem (cuda, nvshmem)" "NOT RUN (no torch_anchor.py or no torch: $ANCHOR)"
fi
(( BUILT )) && native_nvshmem ""

# 6. second runs while the budget allows (60 s kept for them to finish and for the table).
if (( BUILT && BUDGET - $(elapsed) > 60 )); then native_cuda ", run 2"; fi
if (( HAVE_TORCH && BUDGET - $(elapsed) > 90 )); then torch_run cuda 29713 2; fi
if (( BUILT && BUDGET - $(elapsed) > 60 )); then native_nvshmem ", run 2"; fi
if (( HAVE_TORCH && BUDGET - $(elapsed) > 90 )); then torch_run nvshmem 29714 2; fi

# 7. last: the steps and the tables.
grep -aE "Error|rror:|skipped:" "$OUT/torch.log" 2>/dev/null | sort | uniq -c | head -6
{
  echo "===== steps ($(elapsed) s of a $BUDGET s budget; logs in $OUT)"; printf '%s\n' "${SUMMARY[@]}"
  python3 scripts/gpu/anchors_summary.py --out "$OUT" --bundle
} 2>&1 | tee "$OUT/summary.txt"
