#!/usr/bin/env bash
# docs/index.md's PyTorch quick start, exactly as the page runs it (about 1-2 minutes):
#   `symmem launch -n N --master-port 29500 serve` with SYMMEM_HTTP_PORT=8700 (N = 2 with two GPUs or
#   more, else 1), then N PyTorch processes running docs/examples/pytorch/nccl_from_sidecar.py with RANK,
#   WORLD_SIZE and LOCAL_RANK, each asking its own sidecar (127.0.0.1:8700 + LOCAL_RANK) for NCCL's unique id. Each prints
#   "rank R of N: all_reduce of rank+1 = S (want S): PASS"; the script exits 0 only when every rank passes.
# Needs PyTorch with its NCCL wheel (nvidia.nccl) on PATH's python3, and the app packed by scripts/gpu/pack.sh
# as .gpu/symmem-gpu.tar.xz (this machine has no Java).
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
. scripts/gpu/lib.sh
symmem_runtime
NGPU=$(gpu_count)
N=$(( NGPU >= 2 ? 2 : 1 ))
echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  world: $N  torch: $(python3 -c 'import torch; print(torch.__version__)')  python: $(python3 -V)" \
  | tee "$OUT/machine.txt"

export SYMMEM_HTTP_PORT=8700 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500
"${SYMMEM[@]}" launch -n "$N" --master-port "$MASTER_PORT" serve > "$OUT/sidecars.log" 2>&1 &
LAUNCH=$!
pids=()
for (( r = 0; r < N; r++ )); do
  RANK=$r WORLD_SIZE=$N LOCAL_RANK=$r timeout 180 python3 docs/examples/pytorch/nccl_from_sidecar.py > "$OUT/torch-$r.log" 2>&1 &
  pids+=($!)
done
rc=0
for (( r = 0; r < N; r++ )); do wait "${pids[$r]}" || rc=1; done
kill "$LAUNCH" 2>/dev/null; wait "$LAUNCH" 2>/dev/null
cat "$OUT"/torch-*.log
(( rc == 0 )) && echo "quick start: PASS (world $N)" || { echo "quick start: FAIL (logs in $OUT)"; tail -20 "$OUT/sidecars.log"; }
exit $rc
