#!/usr/bin/env python3
"""numpy's peer of bench_reductions: the same n x n float32 values, reduced by numpy (one thread).

Started by bench_reductions as a co-process: it prints "ready" once the array is built, then answers
each request line "OP AXIS REPS WARM" (OP in sum/mean/max/min, AXIS in all/0/1) with
"result OP AXIS SECONDS" (the median of REPS runs after WARM untimed ones), so that each of numpy's
figures is measured right next to ours in the same run. "quit" (or the end of input) ends it.

    python bench/numpy_reduce_peer.py 8192
"""
import sys
import time

import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    # bench_reductions' values: float(i % 1000) * 0.001f - 0.5f, in float32 arithmetic.
    i = np.arange(n * n, dtype=np.int64) % 1000
    x = (i.astype(np.float32) * np.float32(0.001) - np.float32(0.5)).reshape(n, n)
    del i
    ops = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        op, axis, reps, warm = words[0], words[1], int(words[2]), int(words[3])
        f = ops[op]
        ax = None if axis == "all" else int(axis)
        for _ in range(warm):
            f(x, axis=ax)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f(x, axis=ax)
            times.append(time.perf_counter() - t0)
        times.sort()
        print(f"result {op} {axis} {times[len(times) // 2]:.9f}", flush=True)


if __name__ == "__main__":
    main()
