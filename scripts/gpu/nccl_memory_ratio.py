"""symmem's kernels on NCCL memory against its own: reads the JSON files of repeated
`bench allreduce --nccl` runs (r<i>-cuda.json, r<i>-nccl.json in the folder given) and prints, per
size, the one-shot time on each memory (min..max over the runs) and the ratio of the medians."""
import glob
import json
import os
import statistics
import sys

folder = sys.argv[1]
runs = {"cuda": [], "nccl": []}
for be in runs:
    for f in sorted(glob.glob(os.path.join(folder, "r*-%s.json" % be))):
        runs[be].append({r["bytes"]: r for r in json.load(open(f))["allreduce"]})
if not runs["cuda"] or not runs["nccl"]:
    sys.exit("no runs found in " + folder)
print("%10s %22s %22s %8s %12s %12s" % ("bytes", "ours cuda mem (us)", "ours nccl mem (us)", "ratio", "nccl", "nccl window*"))
for size in sorted(runs["cuda"][0]):
    c = [r[size]["one_shot_us"] for r in runs["cuda"] if size in r]
    n = [r[size]["one_shot_us"] for r in runs["nccl"] if size in r]
    pw = [r[size]["nccl_us"] for r in runs["cuda"] if size in r]
    nw = [r[size]["nccl_window_us"] for r in runs["nccl"] if size in r]
    print("%10d %10.2f..%-10.2f %10.2f..%-10.2f %8.3f %12.2f %12.2f" % (size, min(c), max(c), min(n), max(n),
          statistics.median(n) / statistics.median(c), statistics.median(pw), statistics.median(nw)))
print("%d runs each; ratio = median on NCCL memory / median on cuda memory; nccl = plain (cuda run), "
      "nccl window* = on the ncclMemAlloc window (nccl run), medians" % len(runs["cuda"]))
