#!/usr/bin/env python3
"""Ray's peer figures for bench_colocated: the synchronous round trip of an actor
method call (ray.get(actor.echo.remote(x))) and the rate of asynchronous calls (all submitted, then
ray.get of every reference), on a local Ray started by this script.

    python bench/ray_peer.py [--rounds N] [--async-calls M]

Prints "ray sync median us: X", "ray sync p99 us: Y" and "ray async calls/s: Z"; exits 3 with
"Ray is not installed" when `import ray` fails.
"""
import argparse
import statistics
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--async-calls", type=int, default=20000)
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        print("Ray is not installed for " + sys.executable)
        return 3

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")

    @ray.remote
    class Echo:
        def echo(self, x):
            return x

    actor = Echo.remote()
    ray.get(actor.echo.remote(0))
    for _ in range(200):  # warm up, untimed
        ray.get(actor.echo.remote(1))
    samples = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        ray.get(actor.echo.remote(1))
        samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    print("ray sync median us: %.2f" % statistics.median(samples))
    print("ray sync p99 us: %.2f" % samples[min(len(samples) - 1, int(0.99 * (len(samples) - 1) + 0.5))])

    start = time.perf_counter()
    refs = [actor.echo.remote(1) for _ in range(args.async_calls)]
    ray.get(refs)
    print("ray async calls/s: %.0f" % (args.async_calls / (time.perf_counter() - start)))
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
