# One PyTorch rank beside its symmem sidecar: NCCL's unique id comes from the sidecar, the
# communicator is made with NCCL's own ncclCommInitRank (the NCCL library PyTorch loaded, through
# ctypes), and a tensor is all-reduced on PyTorch's current stream.
# Environment: RANK, WORLD_SIZE, LOCAL_RANK as torchrun sets them; the sidecar of this rank serves
# on 127.0.0.1:SYMMEM_HTTP_PORT + LOCAL_RANK (SYMMEM_HTTP_PORT: 8700 when unset), or at SYMMEM_URL.
import base64
import ctypes
import json
import os
import sys
import time
import urllib.request

import torch

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local_rank = int(os.environ.get("LOCAL_RANK", rank))
http_port = int(os.environ.get("SYMMEM_HTTP_PORT", "8700"))
sidecar = os.environ.get("SYMMEM_URL", f"http://127.0.0.1:{http_port + local_rank}")


def call(path, body=None):
    request = urllib.request.Request(sidecar + path, method="GET" if body is None else "POST",
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return json.load(reply)


def wait_until_ready(seconds=120):
    """The sidecar may still be starting (it is ready once every rank has joined the world)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if call("/v1/world").get("state") == "READY":
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"the sidecar at {sidecar} was not ready within {seconds} s")
        time.sleep(0.2)


class NcclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def nccl_library():
    """The libnccl.so.2 of PyTorch's NCCL wheel: the one PyTorch has loaded already."""
    import nvidia.nccl
    return ctypes.CDLL(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))


def check(nccl, rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: {nccl.ncclGetErrorString(rc).decode()}")


wait_until_ready()
torch.cuda.set_device(local_rank)
uid = NcclUniqueId()
ctypes.memmove(ctypes.addressof(uid), base64.b64decode(call("/v1/groups/world/nccl-unique-id?timeout=60s")["base64"]), 128)

nccl = nccl_library()
nccl.ncclGetErrorString.restype = ctypes.c_char_p
nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, NcclUniqueId, ctypes.c_int]
nccl.ncclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                               ctypes.c_void_p, ctypes.c_void_p]
comm = ctypes.c_void_p()
check(nccl, nccl.ncclCommInitRank(ctypes.byref(comm), world, uid, rank), "ncclCommInitRank")

NCCL_FLOAT32, NCCL_SUM = 7, 0
t = torch.full((1 << 20,), float(rank + 1), device="cuda")
check(nccl, nccl.ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), NCCL_FLOAT32, NCCL_SUM, comm,
                               torch.cuda.current_stream().cuda_stream), "ncclAllReduce")
torch.cuda.synchronize()
call("/v1/groups/world/barrier?timeout=60s", {})  # every rank is done with its all-reduce

want = world * (world + 1) / 2
ok = bool(torch.all(t == want).item())
print(f"rank {rank} of {world}: all_reduce of rank+1 = {t[0].item()} (want {want}): {'PASS' if ok else 'FAIL'}")
nccl.ncclCommDestroy(comm)
sys.exit(0 if ok else 1)
