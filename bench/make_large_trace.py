#!/usr/bin/env python3
"""Writes a large Chrome trace for timing `actormesh trace summary`: N complete ("X") spans spread
over 4 processes x 8 threads, each with three args, plus process-name metadata. Deterministic
(seeded), standard library only.

    bench/make_large_trace.py OUT.json [--spans 1000000]
"""
import argparse
import json
import random

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out")
parser.add_argument("--spans", type=int, default=1_000_000)
args = parser.parse_args()

random.seed(1)
names = ["matmul", "add", "psum", "device_put", "transfer", "reduce"]
with open(args.out, "w") as out:
    out.write('{"traceEvents":[\n')
    out.write(",\n".join(json.dumps({"ph": "M", "name": "process_name", "pid": p + 1, "tid": 0,
                                     "args": {"name": f"process {p}"}}) for p in range(4)))
    t = 0.0
    for i in range(args.spans):
        tid = (i // 4) % 8
        t += random.random() * 3
        out.write(",\n" + json.dumps({"ph": "X", "name": random.choice(names), "pid": i % 4 + 1, "tid": tid,
                                      "ts": round(t, 3), "dur": round(random.random() * 2, 3),
                                      "args": {"device": f"cpu:{tid}", "shape": "(1024, 1024)",
                                               "dtype": "float32"}}))
    out.write('\n],"displayTimeUnit":"ns"}\n')
