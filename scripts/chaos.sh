#!/usr/bin/env bash
# Fail-fast measurement: `symmem chaos` on the host backend (any machine) or on cuda (GPU machine).
#   scripts/chaos.sh [host|cuda] [rounds] [ranks]     e.g. scripts/chaos.sh host 20 4
# On cuda several ranks share one GPU when there are fewer GPUs than ranks
# (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1: correct, not fast). Multicast stays off on shared machines.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
backend="${1:-host}"
rounds="${2:-20}"
ranks="${3:-4}"
export SYMMEM_BACKEND="$backend"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
if [ "$backend" = cuda ]; then
  gpus="$(nvidia-smi -L 2>/dev/null | wc -l || echo 0)"
  if [ "$gpus" -lt "$ranks" ]; then
    export SYMMEM_ALLOW_OVERLAPPING_DEVICES=1
  fi
fi
# SYMMEM_BIN: how to run symmem when not through bin/symmem (the GPU machine: "<jre>/bin/java -jar <app>").
read -r -a symmem <<< "${SYMMEM_BIN:-$root/bin/symmem}"
exec "${symmem[@]}" chaos --ranks "$ranks" --rounds "$rounds" --log "${CHAOS_LOG:-/tmp/symmem-chaos-$backend.log}" "${@:4}"
