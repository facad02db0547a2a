#!/usr/bin/env bash
# The sidecar's HTTP API on the GPU machine, in one go (about 2-3 minutes):
#   1. world 1 on one GPU: a `serve` sidecar; a PyTorch process takes the NCCL unique id from it
#      (GET /v1/groups/world/nccl-unique-id, JSON and raw: the same bytes) and calls
#      torch.cuda.nccl.init_rank(1, id, 0), then all-reduces (scripts/gpu/nccl_from_sidecar.py)
#   2. the NVSHMEM unique id from the same sidecar: 200, the id's size
#   3. with 2 or more GPUs: `launch -n 2 serve`; two PyTorch processes, each asking its own sidecar:
#      the same id bytes on both, init_rank(2, id, rank), the all-reduce's sum checked
#   4. `symmem launch -n 4 bench http` (CPU: barrier and small all-reduce over HTTP beside the Java API)
#   5. LAST: the steps table and the bench table
# The machine has no Java: carry .gpu/symmem-gpu.tar.xz made by scripts/gpu/pack.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export TORCH_CPP_LOG_LEVEL=ERROR PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
STEP_WIDTH=66
. scripts/gpu/lib.sh
symmem_runtime
NGPU=$(gpu_count)
echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  cores: $(nproc)" | tee "$OUT/machine.txt"

ready() { # ready PORT: until the sidecar's world is READY, at most 90 s
  for _ in $(seq 1 450); do
    curl -sf "http://127.0.0.1:$1/v1/world" 2>/dev/null | grep -q '"state":"READY"' && return 0; sleep 0.2
  done; return 1
}
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# 1 + 2: world 1
SYMMEM_HTTP_PORT=8700 RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29611 "${SYMMEM[@]}" serve > "$OUT/serve1.log" 2>&1 &
SERVE=$!
step "world 1: the sidecar is ready" 100 world1.log bash -c "$(declare -f ready); ready 8700"
step "world 1: an NCCL communicator in PyTorch from the sidecar's id" 120 world1.log \
  python3 scripts/gpu/nccl_from_sidecar.py --port 8700 --world 1 --rank 0
step "world 1: nvshmem-unique-id answers 200 with the id" 60 world1.log bash -c \
  'curl -s -w "\n%{http_code}\n" http://127.0.0.1:8700/v1/groups/world/nvshmem-unique-id | tee /dev/stderr | tail -1 | grep -qx 200'
stop $SERVE

# 3: world 2, one GPU each
if (( NGPU >= 2 )); then
  SYMMEM_HTTP_PORT=8710 SYMMEM_BACKEND=cuda "${SYMMEM[@]}" launch -n 2 serve > "$OUT/serve2.log" 2>&1 &
  LAUNCH=$!
  step "world 2: both sidecars ready" 120 world2.log bash -c "$(declare -f ready); ready 8710 && ready 8711"
  python3 scripts/gpu/nccl_from_sidecar.py --port 8710 --world 2 --rank 0 > "$OUT/torch-r0.log" 2>&1 &
  R0=$!
  python3 scripts/gpu/nccl_from_sidecar.py --port 8711 --world 2 --rank 1 > "$OUT/torch-r1.log" 2>&1
  RC1=$?
  wait $R0; RC0=$?
  cat "$OUT/torch-r0.log" "$OUT/torch-r1.log" | tee -a "$OUT/world2.log"
  ID0=$(grep -o 'sha256 [0-9a-f]*' "$OUT/torch-r0.log"); ID1=$(grep -o 'sha256 [0-9a-f]*' "$OUT/torch-r1.log")
  note "world 2: NCCL communicator + all_reduce in both PyTorch ranks" "$([[ $RC0 == 0 && $RC1 == 0 ]] && echo PASS || echo "FAIL (rc $RC0/$RC1)")"
  note "world 2: the same id bytes from both sidecars" "$([[ -n $ID0 && $ID0 == "$ID1" ]] && echo "PASS ($ID0)" || echo "FAIL ($ID0 / $ID1)")"
  stop $LAUNCH
else
  note "world 2 (needs 2 GPUs)" "SKIPPED: $NGPU GPU(s) here"
fi

# 4: the HTTP bench at world 4 (host backend: it measures the control plane, not the GPUs)
step "bench http, world 4" 300 bench-http.log env SYMMEM_BACKEND=host SYMMEM_HTTP_PORT=8720 "${SYMMEM[@]}" launch -n 4 bench http

echo; echo "==== steps ($(elapsed) s)"; printf '%s\n' "${SUMMARY[@]}"
echo; grep -h "id sha256" "$OUT"/world*.log; echo; grep -A6 "symmem bench http:" "$OUT/bench-http.log" | sed "s/^\[0\] //"
