#!/usr/bin/env bash
# The copy-engine two-shot (SYMMEM_ALGO_TWO_SHOT_CE) on two GPUs, under 8 minutes, nothing but the
# repository needed (the native code is built here):
#   1. build: libsymmem, every GPU test, symmem_bench (cmake -j16)
#   2. ctest: the whole native suite, or the tests CTEST_REGEX matches (test_cuda_ce; every
#      collective x dtype x op in test_cuda_collectives, the copy-engine two-shot with 64 KiB chunks;
#      every other test, whose buffers have the copy-engine flags in their layout); then
#      test_cuda_collectives once more at world 2 and 4 on these GPUs
#      (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1: world 4 checks the refusal)
#   3. symmem_bench --world 2, 1 MiB to 256 MiB, bf16: two-shot in place against the copy-engine
#      two-shot (opt-in: SYMMEM_CUDA_CE_SLOT_BYTES) with 32 MiB slots; then 16 and 8 MiB slots (more,
#      smaller chunks); and symmem_link_probe ce / ce-signals: the same algorithm on cudaMalloc'ed
#      memory within one process, ordered by events (the floor of this machine's copy engines) and
#      by flags the ways a product between processes can (what the signalling costs)
#   4. LAST: per size, two-shot in place, copy-engine two-shot (each slot size), their ratio and bus
#      bandwidth; the steps
#   bash scripts/gpu/run-ce.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# NVLink multicast must never be used on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMMEM_DISABLE_MULTICAST=1
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
unset SYMMEM_CUDA_CE_SLOT_BYTES SYMMEM_CUDA_CE_MIN_BYTES SYMMEM_CUDA_TWO_SHOT_MIN_BYTES SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-470}
. scripts/gpu/lib.sh
B=${BUILD_DIR:-/tmp/symmem-ce-build}
NGPU=$(gpu_count)
# The NCCL and NVSHMEM tests find PyTorch's pip libraries.
SITE=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || echo /opt/torch/.venv/lib/python3.12/site-packages)
export SYMMEM_TEST_NCCL_LIB=${SYMMEM_TEST_NCCL_LIB:-$SITE/nvidia/nccl/lib/libnccl.so.2}
export SYMMEM_TEST_NVSHMEM_LIB=${SYMMEM_TEST_NVSHMEM_LIB:-$SITE/nvidia/nvshmem/lib/libnvshmem_host.so.3}
{
  echo "date: $(date -u +%FT%TZ)  gpus: $NGPU  commit: $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -4
  echo "nccl: $SYMMEM_TEST_NCCL_LIB"; echo "nvshmem: $SYMMEM_TEST_NVSHMEM_LIB"
  nvcc --version 2>&1 | tail -1; nproc
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

qstep "native build (libsymmem, GPU tests, symmem_bench)" 240 native.log bash -c \
  "cmake -S src/native-cuda -B '$B' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON && cmake --build '$B' -j16"
if (( $? == 0 )); then
  # CTEST_REGEX=... runs only the tests it matches (ctest -R).
  qstep "ctest (${CTEST_REGEX:-the whole native suite})" 200 ctest.log bash -c "cd '$B' && ctest --output-on-failure --timeout 150 ${CTEST_REGEX:+-R '$CTEST_REGEX'}"
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped" "$OUT/ctest.log" | tail -8
  SYMMEM_TEST_WORLDS=2,4 SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 \
    qstep "test_cuda_collectives, world 2 and 4 (overlapping)" 120 ctest.log "$B/tests/test_cuda_collectives"
  if (( NGPU >= 2 )); then
    SYMMEM_CUDA_CE_SLOT_BYTES=$((32 << 20)) qstep "symmem_bench world 2, 1-256 MiB, 32 MiB slots" 150 bench.txt \
      "$B/symmem_bench" --world 2 --min-bytes 1048576
    SYMMEM_CUDA_CE_SLOT_BYTES=$((16 << 20)) qstep "symmem_bench, 16 MiB slots, 16-256 MiB" 60 bench.txt \
      "$B/symmem_bench" --world 2 --min-bytes $((16 << 20))
    SYMMEM_CUDA_CE_SLOT_BYTES=$((8 << 20)) qstep "symmem_bench, 8 MiB slots, 16-256 MiB" 60 bench.txt \
      "$B/symmem_bench" --world 2 --min-bytes $((16 << 20))
    qstep "probe: the two-shot moved by copy engines, one process" 120 probe.txt bash -c \
      "cmake --build '$B' -j16 --target symmem_link_probe >/dev/null && '$B/symmem_link_probe' ce && '$B/symmem_link_probe' ce-signals"
  fi
fi

echo
echo "===== two-shot in place against the copy-engine two-shot (symmem_bench, us per op, bf16, world 2)"
python3 - "$OUT/bench.txt" <<'EOF'
import re, sys
runs, names, label = [], None, None
for line in open(sys.argv[1], errors="replace"):
    t = line.split()
    if line.startswith("=== symmem_bench"):
        m = re.search(r"(\d+) MiB slots", line)
        label = m.group(1) + "M" if m else "?"
    elif t and t[0] == "bytes":
        names, rows = t[1:], {}
        runs.append((label, rows))
    elif names and t and t[0].isdigit() and len(t) == len(names) + 1:
        rows[int(t[0])] = dict(zip(names, t[1:]))
    elif t and not t[0].isdigit():
        names = None if t[0] != "bytes" else names
sizes = sorted({b for _, rows in runs for b in rows})
print(f"{'size':>10} {'two-shot-ip':>12} " + " ".join(f"{'ce ' + l:>12}" for l, _ in runs) + f" {'ratio':>7} {'ce GB/s':>8} {'ip=':>5}")
for b in sizes:
    two = next((float(r[b]['two-shot-ip']) for _, r in runs if b in r and r[b].get('two-shot-ip', '-') != '-'), None)
    ces = [float(r[b]['two-shot-ce-ip']) if b in r and r[b].get('two-shot-ce-ip', '-') != '-' else None for _, r in runs]
    best = min((c for c in ces if c), default=None)
    ip = next((r[b].get('ip=') for _, r in runs if b in r), '-')
    cell = lambda v: f"{v:12.2f}" if v else f"{'-':>12}"
    ratio = f"{best / two:7.3f}" if best and two else f"{'-':>7}"
    bw = f"{b / (best * 1e-6) / 1e9:8.1f}" if best else f"{'-':>8}"
    print(f"{b:>10} {cell(two)} " + " ".join(cell(c) for c in ces) + f" {ratio} {bw} {ip:>5}")
EOF
grep -h "^CE" "$OUT/probe.txt" 2>/dev/null | sed 's/^/probe: /'
echo
echo "===== steps ($(elapsed) s)"
printf '%s\n' "${SUMMARY[@]}"
