#!/usr/bin/env python3
"""Writes tests/data/jax_visualize_colour.jsonl: JAX's coloured sharding pictures
(jax.debug.visualize_sharding on a truecolor terminal, matplotlib's tab20b colours), which
tests/unit/test_visualize_colour.cpp compares against byte for byte (no JAX needed there).

Run once with JAX, matplotlib and rich from PyPI:
    python3 -m venv v && v/bin/pip install jax matplotlib rich
    v/bin/python tools/gen_jax_visualize_colour.py > tests/data/jax_visualize_colour.jsonl

One JSON object a line: "shape", "mesh" (its shape), "axes" (its names), "spec" (a list whose
entries are null, an axis name or a list of names), "devices" (CPU devices in the mesh, in id
order) and "picture" (what rich wrote, escape sequences included). Only cases whose labels fit
their cells: where they do not, rich drops them and actormesh keeps them (doc/sharding.md).
"""
import io
import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=16"

import jax  # noqa: E402
import numpy as np  # noqa: E402
import rich.console  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

CASES = [
    ((8,), (8,), ("x",), ["x"]),
    ((8,), (2,), ("x",), [None]),
    ((32,), (4,), ("x",), ["x"]),
    ((8, 4), (2,), ("x",), [None]),
    ((8, 4), (4, 2), ("x", "y"), ["x", "y"]),
    ((8, 4), (4, 2), ("x", "y"), ["y", "x"]),
    ((8, 8), (2, 2), ("x", "y"), ["x", None]),
    ((8, 8), (2, 2), ("x", "y"), [None, "y"]),
    ((8, 8), (2, 4), ("x", "y"), [["x", "y"], None]),
    ((16, 16), (2, 4), ("x", "y"), ["x", "y"]),
    ((16, 4), (16,), ("x",), ["x", None]),
    ((4, 8), (2, 2), ("x", "y"), ["y", "x"]),
    ((8, 2), (4,), ("x",), ["x"]),
    ((6, 4), (3,), ("x",), ["x"]),
]


def spec_of(entries):
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def picture(shape, mesh_shape, axes, spec):
    out = io.StringIO()
    console_class = rich.console.Console

    class Recording(console_class):
        def __init__(self, *args, **kwargs):
            kwargs.update(file=out, force_terminal=True, color_system="truecolor")
            super().__init__(*args, **kwargs)

    rich.console.Console = Recording  # jax imports rich.console inside visualize_sharding
    try:
        count = int(np.prod(mesh_shape))
        devices = np.array(jax.devices()[:count]).reshape(mesh_shape)
        jax.debug.visualize_sharding(shape, NamedSharding(Mesh(devices, axes), spec_of(spec)))
    finally:
        rich.console.Console = console_class
    return out.getvalue(), count


def main():
    for shape, mesh_shape, axes, spec in CASES:
        text, count = picture(shape, mesh_shape, axes, spec)
        record = {"shape": list(shape), "mesh": list(mesh_shape), "axes": list(axes), "spec": spec,
                  "devices": count, "picture": text}
        sys.stdout.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
