"""PyTorch's NCCL all_reduce latency beside symmem's (scripts/gpu/run-nccl.sh), bf16 sum.

World 1 (plain python): torch.cuda.nccl.all_reduce on one tensor (a one-device clique) and
torch.distributed (backend nccl, world 1). World N (torchrun): torch.distributed only.
At world 1 NCCL's all-reduce is a device copy (or nothing, in place): the figures measure the
per-call overhead of each API, not communication. Prints "TORCH-<API> <bytes> <us_per_op> <iters>".
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def timed(fn, sync):
    for _ in range(5):
        fn()
    sync()
    iters = 10
    while True:
        if dist.is_initialized():
            dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        dt = time.perf_counter() - t0
        if dt > 0.1 or iters >= 20000:
            return dt / iters * 1e6, iters
        iters *= 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", default="4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456")
    a = ap.parse_args()
    sizes = [int(s) for s in a.bytes.split(",")]
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    dev = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(dev)
    rows = []
    if world == 1:
        import torch.cuda.nccl as nccl
        for b in sizes:
            x = torch.empty(b // 2, dtype=torch.bfloat16, device="cuda")
            us, it = timed(lambda: nccl.all_reduce([x]), torch.cuda.synchronize)
            rows.append(("TORCH-CUDA-NCCL", b, us, it))
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29577")
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
    dist.init_process_group("nccl", device_id=torch.device("cuda", dev))
    for b in sizes:
        x = torch.empty(b // 2, dtype=torch.bfloat16, device="cuda")
        us, it = timed(lambda: dist.all_reduce(x), torch.cuda.synchronize)
        rows.append(("TORCH-DIST-NCCL", b, us, it))
    dist.destroy_process_group()
    if rank == 0:
        print(f"torch {torch.__version__} nccl {torch.cuda.nccl.version()} world {world}")
        for api, b, us, it in rows:
            print(f"{api} {b} {us:.2f} {it}")


if __name__ == "__main__":
    main()
