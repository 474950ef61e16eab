#!/usr/bin/env python3
"""Refuses an include that names a public header by its path in the tree instead of its installed name.

The public headers (actormesh.hpp and every header it reaches through quoted includes) are installed
as include/actormesh/<floor>/<file> and name each other that way; in the build tree the name
"actormesh/<floor>/<file>" reaches the source file through a link (CMakeLists.txt). A file that
wrote "<floor>/<file>" instead would reach the same header through a second path. The compiler
usually sees through that (#pragma once compares the files), but not always: a precompiled header
served by the compiler cache from another build once held the header under its installed name, and a
test that also included it by its tree name got every declaration twice ("multiple definition of
enum class am::scheduler_policy"). One name for each header leaves nothing to see through.

Run by ctest as unit/public_header_names (and unit/public_header_names_self_check).
"""
import os
import re
import tempfile

import checker_cli

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
UMBRELLA = "actormesh.hpp"
PREFIX = "actormesh/"
SOURCE_SUFFIXES = (".cpp", ".hpp", ".inc", ".cu", ".cuh", ".h", ".in")
SKIPPED_FOLDERS = {".git", "build", "shared"}


def tree_path(source, name):
    """The file in the tree behind an include name of the public surface."""
    return os.path.join(source, name.removeprefix(PREFIX))


def public_headers(source):
    """The tree paths ("<floor>/<file>") of every header the umbrella reaches."""
    seen, queue = set(), [UMBRELLA]
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        path = tree_path(source, name)
        if not os.path.exists(path):
            continue  # a generated header (build_config.hpp)
        with open(path, encoding="utf-8", errors="replace") as f:
            queue.extend(INCLUDE.findall(f.read()))
    return {name.removeprefix(PREFIX) for name in seen if name.startswith(PREFIX)}


def violations(source):
    """Every (file, included) of `source` that names a public header by its tree path, sorted."""
    public = public_headers(source)
    found = []
    for root, folders, files in os.walk(source):
        folders[:] = [f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("build")]
        for name in files:
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for included in INCLUDE.findall(text):
                if included in public:
                    found.append((os.path.relpath(path, source), included))
    return sorted(found)


def check(source):
    found = violations(source)
    for relative, included in found:
        print(f"{relative}: includes \"{included}\": a public header; write \"{PREFIX}{included}\"")
    if found:
        print(f"public header names: {len(found)} include(s) name a public header by its tree path")
        return 1
    print(f"public header names: every include of the {len(public_headers(source))} public headers "
          f"uses its installed name")
    return 0


def self_check():
    """The check refuses a public header named by its tree path and accepts internal headers so named."""
    with tempfile.TemporaryDirectory() as tree:
        def write(relative, text):
            path = os.path.join(tree, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        write(UMBRELLA, '#include "actormesh/actors/a.hpp"\n')
        write("actors/a.hpp", '#include "actormesh/actors/b.hpp"\n')
        write("actors/b.hpp", "\n")
        write("actors/detail/c.hpp", '#include "actormesh/actors/a.hpp"\n')
        write("devices/d.cpp", '#include "actors/detail/c.hpp"\n#include "actormesh/actors/b.hpp"\n')
        if violations(tree):
            print(f"public header names self-check: a tree that keeps the rule was refused: {violations(tree)}")
            return 1
        write("devices/e.cpp", '#include "actors/b.hpp"\n')
        write("tools/f.cpp", '#include "actors/a.hpp"\n')
        found = violations(tree)
        if found != [("devices/e.cpp", "actors/b.hpp"), ("tools/f.cpp", "actors/a.hpp")]:
            print(f"public header names self-check: expected two refusals, got {found}")
            return 1
    print("public header names self-check: public headers named by their tree paths are refused")
    return 0


if __name__ == "__main__":
    checker_cli.run(__doc__.splitlines()[0], check, self_check)
