#!/usr/bin/env python3
"""Refuses an include that runs up the library's floors (doc/architecture.md, "Floors").

Each floor of libactormesh may include only itself and the floors below it, in this order:

    actors  observability  cluster  devices  sharding  parallel  multihost  colocated  actor_mesh

and the floors above devices/ reach the running runtime through devices/runtime_context.hpp, never
through its CAF-carrying implementation devices/detail/runtime_impl.hpp. tools/, demos/, bench/ and
tests/ sit above every floor. Run by ctest as unit/floors (and unit/floors_self_check, which feeds it
a tree with an upward include and expects a refusal).
"""
import os
import re
import tempfile

import checker_cli

FLOORS = ["actors", "observability", "cluster", "devices", "sharding", "parallel", "multihost", "colocated", "actor_mesh"]
HUB = "devices/detail/runtime_impl.hpp"
SOURCE_SUFFIXES = (".cpp", ".hpp", ".inc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def violations(source):
    """Every (file, included, why) of `source` that breaks a rule, sorted."""
    rank = {floor: i for i, floor in enumerate(FLOORS)}
    found = []
    for floor in FLOORS:
        top = os.path.join(source, floor)
        for root, _, files in os.walk(top):
            for name in files:
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                relative = os.path.relpath(path, source)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for included in INCLUDE.findall(text):
                    # Public headers name each other by their installed names, "actormesh/<floor>/...".
                    target = included.removeprefix("actormesh/").split("/", 1)[0]
                    if target in rank and rank[target] > rank[floor]:
                        found.append((relative, included, f"{floor}/ is below {target}/"))
                    elif included == HUB and rank[floor] > rank["devices"]:
                        found.append((relative, included, "floors above devices/ use devices/runtime_context.hpp"))
    return sorted(found)


def check(source):
    found = violations(source)
    for relative, included, why in found:
        print(f"{relative}: includes \"{included}\": {why}")
    if found:
        print(f"floors: {len(found)} include(s) run against the floors (order: {' < '.join(FLOORS)})")
        return 1
    print(f"floors: every include of {' < '.join(FLOORS)} points to its own floor or one below")
    return 0


def self_check():
    """The check refuses upward includes (by a floor's name and by a public header's installed name)
    and the hub above devices/."""
    with tempfile.TemporaryDirectory() as tree:
        def write(relative, text):
            checker_cli.write_file(tree, relative, text)
        write("actors/a.hpp", '#include "actors/b.hpp"\n')
        write("devices/d.cpp", '#include "actors/a.hpp"\n#include "devices/detail/runtime_impl.hpp"\n')
        if violations(tree):
            print("floors self-check: a tree that keeps the rules was refused")
            return 1
        write("actors/c.cpp", '#include "sharding/array.hpp"\n')
        write("actors/p.hpp", '#include "actormesh/devices/runtime.hpp"\n')
        write("sharding/s.cpp", '#include "devices/detail/runtime_impl.hpp"\n')
        found = violations(tree)
        if [(f, i) for f, i, _ in found] != [("actors/c.cpp", "sharding/array.hpp"),
                                             ("actors/p.hpp", "actormesh/devices/runtime.hpp"),
                                             ("sharding/s.cpp", HUB)]:
            print(f"floors self-check: expected three refusals, got {found}")
            return 1
    print("floors self-check: upward includes and the hub above devices/ are refused")
    return 0


if __name__ == "__main__":
    checker_cli.run(__doc__.splitlines()[0], check, self_check)
