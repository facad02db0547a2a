#!/usr/bin/env bash
# Broadcast, all-to-all, all-to-all-v (MoE shape), put and a signalled round trip: symmem beside NCCL's
# own C loop and PyTorch's all_to_all_vdev (NVSHMEM backend), in one call, at world NGPU (at most 8).
# Needs 2 GPUs or more. Builds symmem_movers_bench (or PREBUILT=DIR with libsymmem.so and it), then
#   1. symmem_movers_bench against the pip NCCL (ncclAlltoAll is there from 2.28)
#   2. torchrun scripts/gpu/torch_a2av_anchor.py (the same MoE shape)
# Logs under $OUT; a table of both apis per op and size last.
#   bash scripts/gpu/run-movers.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
. scripts/gpu/lib.sh
BUDGET=${BUDGET:-540}
T0=$(date +%s)
NGPU=$(gpu_count)
machine_txt
if (( NGPU < 2 )); then
  echo "run-movers.sh: $NGPU GPU(s): the movers are timed between GPUs of their own, 2 or more"
  exit 0
fi
W=$(( NGPU < 8 ? NGPU : 8 ))
BENCH_ENV=(env)
if [[ -n ${PREBUILT:-} ]]; then
  use_prebuilt "$PREBUILT" libsymmem.so symmem_movers_bench || exit 1
else
  B=${BUILD_DIR:-/tmp/symmem-movers-build}
  qstep "native build" 300 native-build.log bash -c "$(native_build_cmd "$B" symmem symmem_movers_bench)" \
    || { printf '%s\n' "${SUMMARY[@]}"; tail -20 "$OUT/native-build.log"; exit 1; }
fi
PIP_NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null \
  || echo /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2)
SYMMEM_TEST_NCCL_LIB=$PIP_NCCL qstep "symmem_movers_bench, symmem and NCCL (world $W)" 300 movers.txt \
  "${BENCH_ENV[@]}" "$B/symmem_movers_bench" --world "$W"
if python3 -c 'import torch' 2>/dev/null; then
  qstep "PyTorch all_to_all_vdev, NVSHMEM backend (world $W)" 150 torch-a2av.txt \
    torchrun --nproc-per-node="$W" --master-port 29731 scripts/gpu/torch_a2av_anchor.py
else
  note "PyTorch all_to_all_vdev" "NOT RUN (no torch)"
fi
echo
echo "== us per op (GB/s sent per rank), slowest rank: symmem, then the anchor"
awk '/^MOVERSBENCH/ { k = $2 " " $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
       v[k, $3] = sprintf("%10.2f (%6.1f)", $5, $6) }
     END { printf "%-12s %12s %22s %22s\n", "op", "bytes", "symmem", "nccl"
           for (i = 1; i <= n; i++) { split(order[i], a, " "); printf "%-12s %12s %22s %22s\n", a[1], a[2], v[order[i], "symmem"], v[order[i], "nccl"] } }' \
  "$OUT/movers.txt"
grep -h "^TORCHA2AV" "$OUT/torch-a2av.txt" 2>/dev/null | awk '{ printf "%-12s %12s %22s   (PyTorch %s)\n", "moe-a2av", $3, sprintf("%10.2f (%6.1f)", $4, $5), $2 }'
echo "== steps"
printf '%s\n' "${SUMMARY[@]}"
