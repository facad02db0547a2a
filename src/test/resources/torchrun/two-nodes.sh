#!/usr/bin/env bash
# Two torchrun agents (2 nodes x 2 gloo workers) whose c10d rendezvous is a symmem store, in a network
# namespace of their own (run under `unshare -rn`): every server here, PyTorch's included, is reachable
# on this namespace's loopback only. Usage: two-nodes.sh JAVA APP_JAR VENV WORK_DIR
set -u
java=$1 app=$2 venv=$3 work=$4
cd "$work"
ip link set lo up
port=29500
"$java" -Xmx256m -XX:TieredStopAtLevel=1 -jar "$app" store --bind 127.0.0.1 --port $port > store.log 2>&1 &
store=$!
for _ in $(seq 1 600); do grep -q "symmem store serving" store.log && break; sleep 0.1; done
grep -q "symmem store serving" store.log || { echo "STORE did not start"; cat store.log; exit 1; }

export LOGLEVEL=INFO OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=lo CHECKPOINT=$work/checkpoint.json KILL_RANK=3 KILL_STEP=10
# PyTorch's default shares the agent's own TCPStore with the workers and keeps its keys across restarts,
# so restarted workers read the earlier attempt's addresses (pytorch/pytorch#135712); this is its opt-out.
export TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
pids=()
for node in 0 1; do
  timeout 180 "$venv/bin/torchrun" --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d \
    --rdzv-endpoint=127.0.0.1:$port --rdzv-id=elastic-sum --rdzv-conf=is_host=false \
    --local-addr=127.0.0.1 --max-restarts=2 --monitor-interval=0.5 elastic_sum.py > node$node.log 2>&1 &
  pids+=($!)
done
for node in 0 1; do
  wait "${pids[$node]}"
  echo "NODE $node exit $?"
done
# What the rendezvous left in the symmem store: its state, as torchelastic's c10d backend wrote it.
"$venv/bin/python" - $port <<'PY' 2>&1 | grep -v Warning
import base64, pickle, sys
from datetime import timedelta
from torch.distributed import TCPStore
store = TCPStore("127.0.0.1", int(sys.argv[1]), is_master=False, timeout=timedelta(seconds=10))
state = pickle.loads(base64.b64decode(store.get("torch.rendezvous.elastic-sum")))
print(f"STORE round {state.round} complete {state.complete} participants {len(state.participants)}")
PY
kill -TERM $store
wait $store
echo "STORE exit $?"
