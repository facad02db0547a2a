#!/usr/bin/env bash
# The CUDA issue's whole GPU-machine run (nvidia-h200-x4), in one go, under 7 minutes:
#   1. build src/native-cuda with CMake (-j16, in the background while 2 runs) and run ctest: the
#      correctness suite, world 2 and 4 (test_cuda_collectives), test_cuda_copy, timeouts, buffers;
#      compute-sanitizer memcheck on the small collective case when the time budget allows
#   2. the Java demo, 4 ranks on 4 GPUs (symmem launch -n 4 demo, SYMMEM_BACKEND=cuda): fp32 auto,
#      bf16 auto, fp16 two-shot; inputs copied in from Java arrays, results checked in float64
#   3. the native bench (symmem_bench), the Java bench (launch -n 4 bench allreduce, out of place and
#      in place) and torchrun torch_anchor.py (PyTorch symm_mem one_shot/two_shot and NCCL)
#   4. LAST: a side-by-side table per size (scripts/gpu/cuda_summary.py)
# The machine has no Java: the runtime and the app come from scripts/gpu/pack.sh as
# .gpu/symmem-gpu.tar.xz (carry that path). Files go to $OUT (at most 8 come back).
#   bash scripts/gpu/run-cuda.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=58
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-cuda-build}
NGPU=$(gpu_count)
# One rank per GPU, up to 8 (collectives support world 2..8); WORLD=N overrides.
WORLD=${WORLD:-$(( NGPU < 8 ? NGPU : 8 ))}
# With 8 GPUs the native suite also runs world 8 on 8 GPUs; SYMMEM_TEST_WORLDS=... overrides.
if (( NGPU >= 8 )); then export SYMMEM_TEST_WORLDS=${SYMMEM_TEST_WORLDS:-2,4,8}; fi

{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $WORLD"
  nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv 2>&1; nvidia-smi topo -m 2>&1 | head -8
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
  "$JAVA" -version 2>&1 | head -1; nvcc --version 2>&1 | tail -1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 1. native build in the background (CPU) while the Java demo runs on the GPUs.
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 ) > "$OUT/native.log" 2>&1 &
BUILD_PID=$!

# 2. the Java demo, 4 ranks on 4 GPUs.
DEMO=(launch -n "$WORLD" demo --min-time-ms 100)
export SYMMEM_BACKEND=cuda
step "java demo, cuda, fp32 auto, $WORLD ranks" 120 run.log "${SYMMEM[@]}" "${DEMO[@]}" --sizes 4KiB,64KiB,1MiB,16MiB,1000003 --dtype fp32 --algo auto
step "java demo, cuda, bf16 auto, $WORLD ranks" 120 run.log "${SYMMEM[@]}" "${DEMO[@]}" --sizes 4KiB,64KiB,1MiB,16MiB,1000002 --dtype bf16 --algo auto
step "java demo, cuda, fp16 two-shot + bf16 one-shot" 120 run.log bash -c '"$@" --sizes 4KiB,1000002 --dtype fp16 --algo two-shot && "$@" --sizes 4KiB,8MiB --dtype bf16 --algo one-shot' _ "${SYMMEM[@]}" "${DEMO[@]}"
unset SYMMEM_BACKEND
SYMMEM_BACKEND=auto step "java demo, SYMMEM_BACKEND=auto picks cuda" 90 run.log bash -c 'out=$("$@" 2>&1); rc=$?; echo "$out"; [[ $rc == 0 ]] && grep -q "backend cuda" <<<"$out"' _ "${SYMMEM[@]}" "${DEMO[@]}" --sizes 64KiB

wait "$BUILD_PID"; rc=$?
note "native build (cmake, -j16) in $(elapsed) s" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
if [[ $rc == 0 ]]; then
  step "ctest (native correctness, world 2 and 4)" 200 native.log bash -c "cd $B && ctest --output-on-failure --timeout 150"
  grep -E "tests passed|tests failed|Skipped|\(Failed\)" "$OUT/native.log" | tail -8
  # The sanitizer only when it fits the 7-minute budget (about 90 s).
  if (( $(elapsed) < 170 )); then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    step "compute-sanitizer memcheck (world 2, small)" 100 native.log env SYMMEM_TEST_SMALL=1 \
      "$CS" --tool memcheck --target-processes all --error-exitcode 9 "$B/tests/test_cuda_collectives"
  else
    note "compute-sanitizer memcheck" "SKIPPED (time budget: $(elapsed) s elapsed)"
  fi
  step "native bench (symmem_bench, bf16 sum, world $WORLD)" 150 bench-native.txt "$B/symmem_bench" --world "$WORLD"
fi

# 2b. world 8 on these GPUs, several ranks per GPU (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1): correctness
#     only, while no 8-GPU machine is lent (WORLD8=0 skips it).
if [[ ${WORLD8:-1} == 1 && $NGPU -lt 8 && -x $B/tests/test_cuda_collectives ]]; then
  SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 SYMMEM_TEST_WORLDS=8 step "native correctness, world 8 on $NGPU GPUs (overlapping)" 240 native.log \
    "$B/tests/test_cuda_collectives"
  SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 SYMMEM_BACKEND=cuda step "java demo, cuda, 8 ranks on $NGPU GPUs (overlapping)" 150 run.log \
    "${SYMMEM[@]}" launch -n 8 demo --min-time-ms 20 --sizes 4KiB,1MiB,1000003 --dtype bf16 --algo auto
fi

# 3. the Java bench, then PyTorch / NCCL.
export SYMMEM_BACKEND=cuda
step "java bench allreduce, out of place" 150 run.log "${SYMMEM[@]}" launch -n "$WORLD" bench allreduce --json "$OUT/java-bench.json"
step "java bench allreduce, in place (two-shot, auto)" 120 run.log "${SYMMEM[@]}" launch -n "$WORLD" bench allreduce --in-place --algos two-shot,auto --json "$OUT/java-bench-ip.json"
unset SYMMEM_BACKEND
if [[ -f $PKG/torch_anchor.py ]]; then
  step "torchrun torch_anchor.py (symm_mem + NCCL)" 180 run.log torchrun --nproc-per-node="$WORLD" "$PKG/torch_anchor.py" \
    --sizes 4096,65536,262144,1048576,8388608,67108864,268435456 --json "$OUT/torch.json"
else
  note "torchrun torch_anchor.py" "SKIPPED (not in the tarball)"
fi

# 4. last: the side-by-side table and the verdicts.
{
  echo "===== steps ($(elapsed) s in all)"; printf '%s\n' "${SUMMARY[@]}"
  echo "===== java demo"; grep -E "^\[0\] (symmem all-reduce|PASS|FAIL| +[0-9])" "$OUT/run.log" | head -40
  python3 scripts/gpu/cuda_summary.py --out "$OUT"
} 2>&1 | tee "$OUT/summary.txt"
