#!/usr/bin/env python3
"""Where anon-r-seq's time goes, usemem against vmscale (docs/vms.md,
"Side by side with vm-scalability"): CPU time, so other load on the
machine does not enter. One task each, interleaved pairs; per run the
words read (the bytes counted less usemem's credit of an eighth of the
mapping, over 8), user time per word, system time per page and minor
faults per page (pages = words / 512). vmscale's CPU outside its task
(start, machine snapshot, store) is taken out by subtracting a 50 ms
run's.

    bench/vms-read-cost.py USEMEM VMSCALE [PAIRS]
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

usemem, vmscale = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
SIZE = 32 << 30  # usemem's mapping; read only: the zero page, no memory
db = os.path.join(tempfile.mkdtemp(prefix="vmscale-read-cost."), "db")


def children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return [r.ru_utime, r.ru_stime, r.ru_minflt]


def show(tool, words, user, sys_, faults):
    pages = words / 512
    print(f"{tool:8} read {words * 8 / 1e9:5.2f} GB  user/word "
          f"{user / words * 1e9:5.2f} ns  sys/page {sys_ / pages * 1e6:5.2f} us  "
          f"faults/page {faults / pages:5.3f}", flush=True)


def vms(runtime):
    before = children()
    out = subprocess.run([vmscale, "run", "vms", "--case", "anon-r-seq", "--tasks", "1",
                          "--size", "1/4", "--runtime", runtime, "--reps", "1",
                          "--warmup", "0", "--json"], capture_output=True, text=True,
                         env=dict(os.environ, VMSCALE_DB=db), check=True).stdout
    used = [b - a for a, b in zip(before, children())]
    d = json.loads(out)
    data = d["cases"][0]["samples"][-1]["data"]
    per_task = d["meta"]["config"]["plans"][0]["amount"]["per_task"]
    words = (data["tasks"][0]["bytes"] - per_task // 8) / 8
    return words, used, data["figures"]["minflt"]


_, base, _ = vms("0.05")
print(f"# load {' '.join(open('/proc/loadavg').read().split()[:3])}; "
      f"vmscale's own CPU (a 50 ms run): user {base[0]:.3f} s, sys {base[1]:.3f} s")
for _ in range(pairs):
    before = children()
    out = subprocess.run([usemem, "-n", "1", "--readonly", "--runtime", "1", str(SIZE)],
                         capture_output=True, text=True, check=True).stdout
    used = [b - a for a, b in zip(before, children())]
    counted = int(re.search(r"(\d+) bytes / \d+ usecs", out).group(1))
    show("usemem", (counted - SIZE // 8) / 8, *used)
    words, used, faults = vms("1.5")
    show("vmscale", words, used[0] - base[0], used[1] - base[1], faults)
