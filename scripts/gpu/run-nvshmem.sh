#!/usr/bin/env bash
# The NVSHMEM issue's GPU-machine run, in one go (about 5 minutes on one GPU):
#   1. where NVSHMEM is: what symmem finds (the locator), `symmem config`'s NVSHMEM rows
#   2. native: build, test_nvshmem_load (the stand-in library, init path included on a GPU),
#      test_nvshmem_gpu (real NVSHMEM: world 1, then world 2 on this machine's GPUs, which on a
#      one-GPU machine means two PEs on one GPU), the cuda tests (shared kernels and layout)
#   3. the Java demo on the nvshmem backend (fp32, bf16, odd sizes, float64 reference), /v1/info of a
#      serving nvshmem rank, and NVSHMEM_INFO=1 beside `symmem config` with NCCL variables set (the
#      PyTorch fallbacks as NVSHMEM itself prints them)
#   4. side by side, bf16 sum 4 KiB .. 256 MiB: ours on the NVSHMEM heap, ours on the cuda backend
#      (Java bench), PyTorch symm_mem with TORCH_SYMMMEM=NVSHMEM and with CUDA, and NCCL (torch_anchor.py)
#   5. LAST: the table (scripts/gpu/nvshmem_summary.py)
# Carry .gpu/symmem-gpu.tar.xz (scripts/gpu/pack.sh). Files go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
. scripts/gpu/lib.sh
symmem_runtime
B=${BUILD_DIR:-/tmp/symmem-nvshmem-build}
NGPU=$(gpu_count)
WORLD=${WORLD:-$(( NGPU < 8 ? NGPU : 8 ))}
: > "$OUT/steps.txt"
note() { printf '%-64s %s\n' "$1" "$2" >> "$OUT/steps.txt"; }  # a file: subshells note too
step() { # step NAME TIMEOUT LOG cmd...
  local name=$1 t=$2 log=$3; shift 3
  echo "=== $name ($(elapsed) s)" | tee -a "$OUT/$log"
  timeout "$t" "$@" >>"$OUT/$log" 2>&1; local rc=$?
  note "$name" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")"
  return $rc
}
PIP_NVSHMEM=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null \
  || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem)
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $WORLD"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
  echo "pip NVSHMEM: $PIP_NVSHMEM"; ls "$PIP_NVSHMEM/lib" 2>&1 | tr '\n' ' '; echo
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# 1. what symmem finds, and the configuration it reports.
( cmake -S src/native-cuda -B "$B" -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build "$B" -j16 ) > "$OUT/native.log" 2>&1 &
BUILD_PID=$!
SYMMEM_BACKEND=nvshmem "${SYMMEM[@]}" config > "$OUT/config.txt" 2>&1
grep -aE "^(NVSHMEM|NCCL|SYMMEM_NVSHMEM|SYMMEM_BACKEND)" "$OUT/config.txt" | cut -c1-100 | tee -a "$OUT/run.log"

# 3. the Java demo on the NVSHMEM heap (world $WORLD; one GPU: world 1).
export SYMMEM_BACKEND=nvshmem
DEMO=(launch -n "$WORLD" demo --min-time-ms 50)
step "java demo, nvshmem, fp32 auto, $WORLD rank(s)" 120 run.log "${SYMMEM[@]}" "${DEMO[@]}" --sizes 4KiB,64KiB,1MiB,16MiB,1000003 --dtype fp32 --algo auto
step "java demo, nvshmem, bf16 one-shot + two-shot, odd sizes" 120 run.log bash -c '"$@" --sizes 4KiB,1000002 --dtype bf16 --algo one-shot && "$@" --sizes 4098,8MiB --dtype bf16 --algo two-shot' _ "${SYMMEM[@]}" "${DEMO[@]}"
# World 2 from Java: on one GPU two PEs share it (NVSHMEM's limited MPG: no teams, no finalize).
if (( NGPU == 1 )); then
  SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 step "java demo, nvshmem, world 2 on ONE GPU, bf16 + fp32" 150 run.log bash -c \
    '"$@" --sizes 4KiB,1000002,8MiB --dtype bf16 --algo auto && "$@" --sizes 4099,1MiB --dtype fp32 --algo two-shot' _ \
    "${SYMMEM[@]}" launch -n 2 demo --min-time-ms 20
fi
# /v1/info of a serving rank.
(WORLD_SIZE=1 RANK=0 MASTER_PORT=29611 SYMMEM_HTTP_PORT=8791 timeout 60 "${SYMMEM[@]}" serve > "$OUT/serve.log" 2>&1 &)
for _ in $(seq 1 300); do curl -sf 127.0.0.1:8791/v1/info -o "$OUT/info.json" 2>/dev/null && grep -q '"in use"' "$OUT/info.json" && break; sleep 0.1; done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("nvshmem")))' "$OUT/info.json" 2>&1 | cut -c1-900 | tee -a "$OUT/run.log"
grep -q '"in use"' "$OUT/info.json" 2>/dev/null && note "/v1/info of a serving nvshmem rank" PASS || note "/v1/info of a serving nvshmem rank" "FAIL (serve.log)"
pkill -f "quarkus-run.jar serve" 2>/dev/null
# NVSHMEM_INFO=1: NVSHMEM prints the environment it runs with; symmem config must say the same.
# Two settings of the NCCL variables: interface + GID index, then the HCA list (which turns the NIC
# mapping on). The second may make NVSHMEM look for InfiniBand, which this machine lacks.
fallback_check() { # NAME LOG, with the NCCL variables already exported
  "${SYMMEM[@]}" config 2>&1 | grep -aE "^NVSHMEM_(BOOTSTRAP_UID_SOCK_IFNAME|IB_GID_INDEX|DISABLE_NVLS|HCA_LIST|ENABLE_NIC_PE_MAPPING) " > "$OUT/$2-config.txt"
  NVSHMEM_INFO=1 timeout 90 "${SYMMEM[@]}" launch -n 1 demo --sizes 4KiB --min-time-ms 10 > "$OUT/$2.log" 2>&1; local rc=$?
  echo "--- $1: symmem config, then NVSHMEM_INFO=1 (demo rc $rc)" | tee -a "$OUT/run.log"
  cut -c1-90 "$OUT/$2-config.txt" | tee -a "$OUT/run.log"
  python3 scripts/gpu/nvshmem_summary.py --compare-env "$OUT/$2-config.txt" "$OUT/$2.log" 2>&1 | tee -a "$OUT/run.log"
  local ok=${PIPESTATUS[0]}
  note "NVSHMEM_INFO=1 matches symmem config ($1)" "$([[ $rc == 0 && $ok == 0 ]] && echo PASS || echo "FAIL (demo rc $rc, compare rc $ok, $2.log)")"
}
( export NCCL_SOCKET_IFNAME=lo NCCL_IB_GID_INDEX=3; fallback_check "NCCL_SOCKET_IFNAME=lo NCCL_IB_GID_INDEX=3" fallback-ifname )
( export NCCL_IB_HCA=mlx5_0; fallback_check "NCCL_IB_HCA=mlx5_0" fallback-hca )
unset SYMMEM_BACKEND

# 2. native tests.
wait "$BUILD_PID"; rc=$?
note "native build in $(elapsed) s" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, native.log)")"
if [[ $rc == 0 ]]; then
  step "test_nvshmem_load (stand-in library, init path on a GPU)" 60 native.log "$B/tests/test_nvshmem_load" "$B/tests/fake_nvshmem"
  SYMMEM_TEST_NVSHMEM_LIB=$PIP_NVSHMEM/lib/libnvshmem_host.so.3 step "test_nvshmem_gpu world 1 (real NVSHMEM)" 120 native.log "$B/tests/test_nvshmem_gpu"
  if (( NGPU >= 2 )); then
    SYMMEM_TEST_NVSHMEM_LIB=$PIP_NVSHMEM/lib/libnvshmem_host.so.3 SYMMEM_TEST_NVSHMEM_WORLD=2 step "test_nvshmem_gpu world 2 (2 GPUs)" 120 native.log "$B/tests/test_nvshmem_gpu"
  else
    SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 SYMMEM_TEST_NVSHMEM_LIB=$PIP_NVSHMEM/lib/libnvshmem_host.so.3 SYMMEM_TEST_NVSHMEM_WORLD=2 \
      step "test_nvshmem_gpu world 2 on ONE GPU (NVSHMEM limited MPG)" 90 native-mpg.log "$B/tests/test_nvshmem_gpu"
    grep -aiE "not supported|MPG|error|FAIL|exited|SKIP" "$OUT/native-mpg.log" | grep -av bootstrap_uid | head -6
  fi
  step "ctest cuda (shared kernels and layout)" 200 native.log bash -c "cd $B && ctest -R 'cuda|backends|bad_args' --output-on-failure --timeout 150"
fi

# 4. side by side.
# Three interleaved rounds per backend (nvshmem, cuda, nvshmem, ...): at a few microseconds one
# measurement varies by tens of percent, so the table compares each size's best round.
BENCH=(launch -n "$WORLD" bench allreduce --sizes 4KiB,64KiB,1MiB,8MiB,64MiB,256MiB --min-time-ms 50)
for round in 1 2 3; do
  SYMMEM_BACKEND=nvshmem step "java bench allreduce, nvshmem heap (round $round)" 150 run.log "${SYMMEM[@]}" "${BENCH[@]}" --json "$OUT/bench-nvshmem-$round.json"
  SYMMEM_BACKEND=cuda step "java bench allreduce, cuda backend (round $round)" 150 run.log "${SYMMEM[@]}" "${BENCH[@]}" --json "$OUT/bench-cuda-$round.json"
done
if [[ -f $PKG/torch_anchor.py ]]; then
  SIZES=4096,65536,1048576,8388608,67108864,268435456
  TORCH_SYMMMEM=NVSHMEM step "torch symm_mem TORCH_SYMMMEM=NVSHMEM + NCCL (world $WORLD)" 150 torch-nvshmem.log \
    torchrun --nproc-per-node="$WORLD" "$PKG/torch_anchor.py" --sizes $SIZES --json "$OUT/torch-nvshmem.json"
  grep -aE "Error|Expected|rror:" "$OUT/torch-nvshmem.log" | head -3
  step "torch symm_mem (CUDA) + NCCL (world $WORLD)" 150 torch.log \
    torchrun --nproc-per-node="$WORLD" "$PKG/torch_anchor.py" --sizes $SIZES --json "$OUT/torch.json"
fi

{
  echo "===== steps ($(elapsed) s in all)"; cat "$OUT/steps.txt"
  echo "===== java demo"; grep -aE "^\[0\] (symmem all-reduce|PASS|FAIL| +[0-9])" "$OUT/run.log" | head -24
  python3 scripts/gpu/nvshmem_summary.py --out "$OUT"
} 2>&1 | tee "$OUT/summary.txt"
