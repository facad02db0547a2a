"""A PyTorch process that bootstraps NCCL with the unique id its symmem sidecar hands out.

    python3 nccl_from_sidecar.py --port 8700 --world 2 --rank 1

Reads GET /v1/groups/world/nccl-unique-id from the sidecar on 127.0.0.1:PORT (JSON with base64, and the
raw bytes, which must be the same), makes a communicator with torch.cuda.nccl.init_rank(world, id,
rank) on GPU `rank`, all-reduces a tensor of rank+1 and checks the sum. Prints one line to compare
across ranks: the id's SHA-256, the way the communicator was made, and the result.

On Python 3.12 with PyTorch 2.11 (the GPU machine's image), torch.cuda.nccl.init_rank itself fails
before it reaches NCCL (SystemError: PY_SSIZE_T_CLEAN macro must be defined for '#' formats: its C
binding parses the id with a '#' format without that macro). The script then makes the same
communicator with ncclCommInitRank from the NCCL library PyTorch loaded (ctypes), in the same
process, and all-reduces the same tensor on PyTorch's current stream; the line says which way it went.
"""
import argparse
import base64
import ctypes
import os
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


class NcclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


NCCL_FLOAT32, NCCL_SUM = 7, 0


def nccl_library():
    """The libnccl.so.2 PyTorch uses: the pip wheel's (already loaded, so dlopen returns it)."""
    import nvidia.nccl
    return ctypes.CDLL(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))


def all_reduce_through_ctypes(uid, world, rank, t):
    lib = nccl_library()
    lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, NcclUniqueId, ctypes.c_int]
    lib.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_void_p, ctypes.c_void_p]
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    comm = ctypes.c_void_p()
    id_struct = NcclUniqueId()
    ctypes.memmove(ctypes.addressof(id_struct), uid, 128)
    rc = lib.ncclCommInitRank(ctypes.byref(comm), world, id_struct, rank)
    if rc != 0:
        raise RuntimeError(f"ncclCommInitRank: {lib.ncclGetErrorString(rc).decode()}")
    stream = torch.cuda.current_stream().cuda_stream
    rc = lib.ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), NCCL_FLOAT32, NCCL_SUM, comm, stream)
    if rc != 0:
        raise RuntimeError(f"ncclAllReduce: {lib.ncclGetErrorString(rc).decode()}")


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
    t = torch.full((1 << 20,), float(a.rank + 1), device=f"cuda:{a.rank}")
    try:
        comm = nccl.init_rank(a.world, uid, a.rank)
        nccl.all_reduce([t], comms=[comm])
        how = "torch.cuda.nccl.init_rank"
    except SystemError as e:
        all_reduce_through_ctypes(uid, a.world, a.rank, t)
        how = f"ncclCommInitRank via ctypes (torch.cuda.nccl.init_rank raised SystemError: {e})"
    torch.cuda.synchronize()
    want = a.world * (a.world + 1) / 2
    ok = bool(torch.all(t == want).item())
    print(f"rank {a.rank}: id sha256 {hashlib.sha256(uid).hexdigest()[:16]} ({len(uid)} bytes), "
          f"all_reduce of rank+1 over {a.world} = {t[0].item()} (want {want}): {'PASS' if ok else 'FAIL'}; "
          f"communicator made with {how}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
