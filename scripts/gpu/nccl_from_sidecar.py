"""A PyTorch process that bootstraps NCCL with the unique id its symmem sidecar hands out.

    python3 nccl_from_sidecar.py --port 8700 --world 2 --rank 1

Reads GET /v1/groups/world/nccl-unique-id from the sidecar on 127.0.0.1:PORT (JSON with base64, and the
raw bytes, which must be the same), makes a communicator with torch.cuda.nccl.init_rank(world, id,
rank) on GPU `rank`, all-reduces a tensor of rank+1 and checks the sum. Prints one line to compare
across ranks: the id's SHA-256 and the result.
"""
import argparse
import base64
import hashlib
import json
import sys
import urllib.request

import torch
import torch.cuda.nccl as nccl


def get(port, accept):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/groups/world/nccl-unique-id?timeout=60s",
                                 headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=90) as reply:
        return reply.read()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--rank", type=int, required=True)
    a = p.parse_args()
    body = json.loads(get(a.port, "application/json"))
    uid = base64.b64decode(body["base64"])
    raw = get(a.port, "application/octet-stream")
    if raw != uid:
        print(f"rank {a.rank}: the raw id differs from the base64 one", file=sys.stderr)
        return 1
    torch.cuda.set_device(a.rank)
    comm = nccl.init_rank(a.world, uid, a.rank)
    t = torch.full((1 << 20,), float(a.rank + 1), device=f"cuda:{a.rank}")
    nccl.all_reduce([t], comms=[comm])
    torch.cuda.synchronize()
    want = a.world * (a.world + 1) / 2
    ok = bool(torch.all(t == want).item())
    print(f"rank {a.rank}: id sha256 {hashlib.sha256(uid).hexdigest()[:16]} ({len(uid)} bytes), "
          f"all_reduce of rank+1 over {a.world} = {t[0].item()} (want {want}): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
