#!/usr/bin/env bash
# The test_cuda_threads stall (2 GPUs, world 2), in under 3 minutes: builds only the tests it runs,
# then
#   1. test_cuda_copy_lock: the stall's cycle built on purpose (a copy waiting for its buffer's
#      channel barrier while the other thread's copy on the same rank must go on); fails on the
#      first round in about 3 s when a copy holds a process-wide lock across that wait
#   2. test_cuda_threads 5 times (6 threads per rank, sum/max/min), once with 3 threads, sum only
#   3. test_cuda_streams, test_cuda_view, test_cuda_buffer, test_cuda_collectives (world 2)
#   4. with .gpu/threads-before (the library before the fix, tests of this branch):
#        mkdir -p .gpu/threads-before && git archive b8beab2 src/native-cuda | tar -x -C .gpu/threads-before \
#          && git archive stallfix src/native-cuda/tests | tar -x -C .gpu/threads-before
#      (carry .gpu/threads-before) test_cuda_copy_lock and one test_cuda_threads against it,
#      expected to FAIL; built at the same time as the rest
#   5. only if a test_cuda_threads run after the fix failed and time is left: two controls,
#      small blocks (no SM can fill up with spinning blocks) and CUDA_DEVICE_MAX_CONNECTIONS=32
# A test_cuda_threads run still going after 9 s (a pass takes a few) gets every thread's stack of
# both ranks written to $OUT/stacks-*.txt (gdb, else the kernel's wait channels): threads in
# pthread_mutex_lock point at a host lock, threads in cudaStreamSynchronize/cudaEventSynchronize at
# kernels that wait for peers. Logs and a PASS/FAIL table (last) in $OUT.
#   bash scripts/gpu/run-threads-diag.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=66
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-threads-build}
BB=${BEFORE_BUILD_DIR:-/tmp/symmem-threads-before}
NGPU=$(gpu_count)
if (( NGPU < 2 )); then export SYMMEM_ALLOW_OVERLAPPING_DEVICES=1; fi
TESTS=(test_cuda_copy_lock test_cuda_threads test_cuda_streams test_cuda_view test_cuda_buffer test_cuda_collectives)

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  cpus: $(nproc)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1; nvcc --version 2>&1 | tail -1
  command -v gdb || echo "no gdb: stacks from /proc only"
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

if [[ -d .gpu/threads-before/src/native-cuda ]]; then
  ( cmake -S .gpu/threads-before/src/native-cuda -B "$BB" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON \
      && cmake --build "$BB" -j8 --target test_cuda_copy_lock test_cuda_threads ) > "$OUT/build-before.log" 2>&1 &
  BEFORE_PID=$!
fi
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON \
    && cmake --build "$B" -j16 --target "${TESTS[@]}" ) > "$OUT/build.log" 2>&1
rc=$?
note "build (${#TESTS[@]} tests, -j16) in $(elapsed) s" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, build.log)")"
(( rc == 0 )) || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
# The tests run with nothing else on the CPUs (a build beside them would change the timing).
if [[ ${BEFORE_PID:-} ]]; then
  wait "$BEFORE_PID"; BEFORE_RC=$?
  note "build BEFORE the fix (.gpu/threads-before) in $(elapsed) s" \
    "$([[ $BEFORE_RC == 0 ]] && echo PASS || echo "FAIL (rc $BEFORE_RC, build-before.log)")"
fi

# Every thread of the test's processes (its parent and its ranks), by process.
stacks() {
  local root=$1 file=$2 p q bt
  local all=($(pgrep -P "$root" 2>/dev/null))
  for p in "${all[@]}"; do all+=($(pgrep -P "$p" 2>/dev/null)); done
  for p in "${all[@]}"; do
    [[ $(cat /proc/$p/comm 2>/dev/null) == test_* ]] || continue
    echo "=== pid $p (parent $(awk '{print $4}' /proc/$p/stat 2>/dev/null))"
    bt=$(command -v gdb >/dev/null && timeout 20 gdb -p "$p" -batch -ex "thread apply all bt 14" 2>/dev/null | grep -E '^(Thread|#)')
    if [[ -n $bt ]]; then echo "$bt"; else
      for q in /proc/$p/task/*; do
        echo "tid ${q##*/} state $(awk '{print $3}' "$q/stat") wchan $(cat "$q/wchan" 2>/dev/null) syscall $(cut -d' ' -f1 "$q/syscall" 2>/dev/null)"
      done
    fi
  done >> "$file" 2>&1
}

# wstep NAME TIMEOUT LOG cmd...: step, plus the stacks of a run still going after 9 s.
wstep() {
  local name=$1 t=$2 log=$3; shift 3
  echo "=== $name ($(elapsed) s)" | tee -a "$OUT/$log"
  timeout "$t" "$@" >>"$OUT/$log" 2>&1 &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 0.5; waited=$((waited + 1))
    if (( waited == 18 )); then
      local f="$OUT/stacks-${log%.*}-$(elapsed)s.txt"
      echo "still running after 9 s: stacks in ${f##*/}" | tee -a "$OUT/$log"
      stacks "$pid" "$f"
    fi
  done
  wait "$pid"; local rc=$?
  # The first failure of each rank is the informative one (the others follow from it).
  local first
  first=$(grep -E "^rank [01] .*round [0-9]+.*(did not|expected|failed)" "$OUT/$log" | sort -s -k2,2n -u | cut -c1-150)
  note "$name" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")"
  [[ $rc != 0 && -n $first ]] && SUMMARY+=("$(sed 's/^/    /' <<<"$first")")
  return $rc
}

wstep "test_cuda_copy_lock (a waiting copy stops no other thread)" 40 copy-lock.log "$B/tests/test_cuda_copy_lock"
AFTER_FAILS=0
for i in 1 2 3 4 5; do
  wstep "test_cuda_threads, 6 threads, sum/max/min (run $i)" 40 "threads-$i.log" "$B/tests/test_cuda_threads" \
    || AFTER_FAILS=$((AFTER_FAILS + 1))
done
SYMMEM_TEST_THREADS=3 SYMMEM_TEST_OPS=sum wstep "test_cuda_threads, 3 threads, sum" 40 threads-3sum.log "$B/tests/test_cuda_threads"
if [[ ${BEFORE_RC:-1} == 0 ]]; then
  wstep "BEFORE: test_cuda_copy_lock (expected FAIL)" 40 before-copy-lock.log "$BB/tests/test_cuda_copy_lock"
  wstep "BEFORE: test_cuda_threads, 6 threads (expected FAIL, 5 of 6 runs)" 40 before-threads.log "$BB/tests/test_cuda_threads"
fi

# Regressions, while the 3-minute budget lasts.
within() { (( $(elapsed) < $1 )) || { note "$2" "SKIPPED (time)"; return 1; }; }
within 150 "test_cuda_streams" && step "test_cuda_streams" 40 others.log "$B/tests/test_cuda_streams"
within 150 "test_cuda_view" && step "test_cuda_view" 40 others.log "$B/tests/test_cuda_view"
within 150 "test_cuda_buffer" && step "test_cuda_buffer" 40 others.log "$B/tests/test_cuda_buffer"
within 140 "test_cuda_collectives (world 2)" && SYMMEM_TEST_WORLDS=2 step "test_cuda_collectives (world 2)" 60 others.log "$B/tests/test_cuda_collectives"

# Controls, only if the fix left a stall: a pass with small blocks points at SMs filled with
# spinning blocks; a pass with 32 connections at streams sharing hardware queues.
if (( AFTER_FAILS > 0 )) && within 170 "controls"; then
  SYMMEM_CUDA_THREADS=128 SYMMEM_CUDA_ONE_SHOT_BLOCKS=33 SYMMEM_CUDA_TWO_SHOT_BLOCKS=16 \
    wstep "control: 128-thread blocks, <= 33 per kernel" 40 control-small.log "$B/tests/test_cuda_threads"
  within 175 "control: CUDA_DEVICE_MAX_CONNECTIONS=32" && CUDA_DEVICE_MAX_CONNECTIONS=32 \
    wstep "control: CUDA_DEVICE_MAX_CONNECTIONS=32" 40 control-conn.log "$B/tests/test_cuda_threads"
fi

echo "=== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
