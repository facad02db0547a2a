#!/usr/bin/env bash
# The native build for every supported GPU, checked on one GPU of this machine (H100 or H200), under
# 8 minutes:
#   1. two builds at once: the shipped one (machine code 8.0, 8.9, 9.0, 10.0 + PTX 10.0) and one of
#      PTX 8.0 only, which the driver compiles for this GPU: the kernels as an A100 runs them
#      (without griddepcontrol), launched as on an A100 (SYMMEM_CUDA_PDL=0)
#   2. what the shipped library holds (cuobjdump), its size
#   3. ctest of the shipped build (two ranks share the GPU where a test needs two; the nccl test
#      needs two GPUs), and the cuda tests of the 8.0 build after one process has filled the driver's
#      JIT cache with it
#   4. the Java demo (the packed app, whose jar carries the shipped library) on the cuda backend
#   5. LAST: symmem_bench world 1 at small sizes, with and without programmatic dependent launch
# Needs .gpu/symmem-gpu.tar.xz (scripts/gpu/pack.sh), carried with the run. SKIP_80=1 leaves out the
# PTX 8.0 build and its tests (about half the run).
#   bash scripts/gpu/run-arch.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH SYMMEM_ALLOW_OVERLAPPING_DEVICES=1
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=60
. scripts/gpu/lib.sh
symmem_runtime
NGPU=$(gpu_count)
machine_txt "nvcc $(nvcc --version | tail -1)"

B=/tmp/symmem-arch-all B80=/tmp/symmem-arch-80
JOBS_ALL=$([[ -n ${SKIP_80:-} ]] && echo 16 || echo 10)
bash -c "$(NATIVE_JOBS=$JOBS_ALL native_build_cmd $B)" > "$OUT/build-all.log" 2>&1 &
P1=$!
if [[ -z ${SKIP_80:-} ]]; then
  bash -c "$(NATIVE_JOBS=6 NATIVE_CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=80-virtual native_build_cmd $B80)" > "$OUT/build-80.log" 2>&1 &
  P2=$!
fi
wait $P1; r1=$?
note "build: 8.0, 8.9, 9.0, 10.0 + PTX 10.0 ($(elapsed) s)" "$([[ $r1 == 0 ]] && echo PASS || echo "FAIL (build-all.log)")"
if [[ -z ${SKIP_80:-} ]]; then
  wait $P2; r2=$?
  note "build: PTX 8.0 only ($(elapsed) s)" "$([[ $r2 == 0 ]] && echo PASS || echo "FAIL (build-80.log)")"
else
  r2=skipped
  note "build: PTX 8.0 only" "NOT RUN (SKIP_80)"
fi

if [[ $r1 == 0 ]]; then
  { cuobjdump --list-elf --list-ptx $B/libsymmem.so | sed 's/.*\(sm_[0-9]*\|compute_[0-9]*\).*/\1/' | sort | uniq -c
    stat -c '%s bytes libsymmem.so' $B/libsymmem.so; } > "$OUT/fatbin.txt" 2>&1
  cat "$OUT/fatbin.txt"
  step "ctest, shipped build (all but test_nccl_gpu)" 300 ctest-all.log \
    bash -c "cd $B && ctest --output-on-failure --timeout 120 -E test_nccl_gpu"
  grep -E "tests passed|tests failed|\(Failed\)|Not Run|Timeout" "$OUT/ctest-all.log" | tail -6
fi
if [[ $r2 == 0 ]]; then
  # The driver compiles the PTX of every kernel when a process makes its first buffer (symmem loads them
  # all then): once, into its cache, here, so that the tests' ranks (each with a deadline of its own)
  # do not each compile it at once. The cache must hold the whole library.
  export CUDA_CACHE_PATH=/tmp/symmem-jit-cache CUDA_CACHE_MAXSIZE=4294967296
  SYMMEM_CUDA_PDL=0 step "JIT cache: the 8.0 PTX compiled for this GPU once" 300 ctest-80.log \
    bash -c "cd $B80 && ctest --output-on-failure --timeout 290 -R 'test_cuda_buffer\$'"
  SYMMEM_CUDA_PDL=0 step "ctest cuda tests, 8.0 code JIT-compiled, no PDL" 200 ctest-80.log \
    bash -c "cd $B80 && ctest --output-on-failure --timeout 120 -R 'test_cuda_(collectives|out_of_step|graphs|ce|streams|threads|view|copy)\$'"
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/ctest-80.log" | tail -4
fi

export SYMMEM_BACKEND=cuda
step "java demo, cuda, 2 ranks on this GPU, fp32 + bf16" 150 demo.log bash -c \
  '"$@" --dtype fp32 --algo auto && "$@" --dtype bf16 --algo auto' _ "${SYMMEM[@]}" launch -n 2 demo --min-time-ms 50 --sizes 4KiB,1MiB,16MiB,1000003
unset SYMMEM_BACKEND

if [[ $r1 == 0 ]]; then
  for pdl in 1 0; do
    echo "=== symmem_bench world 1, SYMMEM_CUDA_PDL=$pdl" >> "$OUT/bench.log"
    SYMMEM_CUDA_PDL=$pdl timeout 60 $B/symmem_bench --world 1 --min-bytes 4096 --max-bytes 65536 --dtype fp32 >> "$OUT/bench.log" 2>&1
  done
  tail -30 "$OUT/bench.log"
fi
echo
printf '%s\n' "${SUMMARY[@]}"
