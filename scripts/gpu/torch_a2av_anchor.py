"""Not a test: PyTorch's all_to_all_vdev (symm_mem on its NVSHMEM backend) on the MoE shape that
symmem_movers_bench's moe-a2av times: 4,096 tokens of 7,168 bf16 per rank, each routed to a random
rank (seeded per rank), out of place, the splits in symmetric memory as the op wants them.

    torchrun --nproc-per-node=2 scripts/gpu/torch_a2av_anchor.py

Checks one call against the inputs (the counts received, and every received token's values name its
sender), then times back-to-back calls on the current stream with CUDA events, the slowest rank's
time per call. Prints "TORCHA2AV all_to_all_vdev <bytes sent by rank 0> <us> <GB/s> <iters>", GB/s
being rank 0's bytes x (world - 1) / world per microsecond x 1e-3, as the C bench counts them.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

TOKENS, HIDDEN = 4096, 7168


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    symm_mem.set_backend("NVSHMEM")
    group_name = dist.group.WORLD.group_name
    if hasattr(symm_mem, "enable_symm_mem_for_group"):
        symm_mem.enable_symm_mem_for_group(group_name)

    dest = torch.randint(0, world, (TOKENS,), generator=torch.Generator().manual_seed(100 + rank))
    order = torch.argsort(dest, stable=True)
    counts = torch.bincount(dest, minlength=world)
    # The tokens in destination order; every element of token t is 8 x rank + 1 + t % 7 (exact in bf16), so
    # a received token shows its sender.
    rows = torch.arange(TOKENS, dtype=torch.float32)[order]
    inp = symm_mem.empty(TOKENS * HIDDEN, dtype=torch.bfloat16, device=device)
    inp.view(TOKENS, HIDDEN).copy_((8 * rank + 1 + (rows.unsqueeze(1) % 7)).expand(TOKENS, HIDDEN))
    out = symm_mem.empty(2 * TOKENS * HIDDEN, dtype=torch.bfloat16, device=device).zero_()
    in_splits = symm_mem.empty(world, dtype=torch.int64, device=device)
    in_splits.copy_(counts * HIDDEN)
    out_splits_offsets = symm_mem.empty((2, world), dtype=torch.int64, device=device)
    for t in (inp, out, in_splits, out_splits_offsets):
        symm_mem.rendezvous(t, group=group_name)

    def call():
        torch.ops.symm_mem.all_to_all_vdev(inp, out, in_splits, out_splits_offsets, group_name)

    call()
    torch.cuda.synchronize()
    every = [torch.zeros(world, dtype=torch.int64, device=device) for _ in range(world)]
    dist.all_gather(every, counts.to(device))
    received = torch.stack([every[q][rank] for q in range(world)]).cpu()
    got = out_splits_offsets[0].cpu() // HIDDEN
    if not torch.equal(got, received):
        sys.exit(f"rank {rank}: received tokens {got.tolist()}, expected {received.tolist()}")
    at = 0
    for q in range(world):
        part = out[at * HIDDEN:(at + int(received[q])) * HIDDEN].view(-1, HIDDEN).float()
        if part.numel() and not bool(((part >= 8 * q + 1) & (part <= 8 * q + 7)).all()):
            sys.exit(f"rank {rank}: the tokens from rank {q} hold values of another sender")
        at += int(received[q])

    for _ in range(5):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        call()
    end.record()
    torch.cuda.synchronize()
    per_ms = torch.tensor(start.elapsed_time(end) / 10, device=device)
    dist.all_reduce(per_ms, op=dist.ReduceOp.MAX)
    iters = int(min(2000, max(10, 100 / max(per_ms.item(), 1e-3))))
    dist.barrier()
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    us = torch.tensor(start.elapsed_time(end) * 1000 / iters, device=device)
    dist.all_reduce(us, op=dist.ReduceOp.MAX)
    sent = TOKENS * HIDDEN * 2
    if rank == 0:
        gbps = sent * (world - 1) / world / us.item() * 1e-3
        print(f"TORCHA2AV all_to_all_vdev {sent} {us.item():.2f} {gbps:.1f} {iters}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
