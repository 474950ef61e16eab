#!/usr/bin/env python3
"""Refuses a public header that is not guarded by a macro, or named by its path in the tree.

The public headers (actormesh.hpp and every header it reaches through quoted includes) are what the
tests' precompiled header holds (tests/CMakeLists.txt), and the compiler cache serves that
precompiled header to builds in other folders. GCC's #pragma once does not survive that: a clean
clone whose precompiled header came from the cache included devices/options.hpp a second time
("multiple definition of enum class am::scheduler_policy"), by the same name as in the precompiled
header. A macro guard (#ifndef ACTORMESH_..._HPP) is defined inside the precompiled header itself
and needs no file to be recognised, so each public header has one, named after its installed path.

Public headers are also named one way everywhere: "actormesh/<floor>/<file>", the name they are
installed under, which reaches the source file through a link in the build tree (CMakeLists.txt).

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


def guard_of(name):
    """The macro that guards the public header `name` ("actormesh/devices/options.hpp")."""
    if name == UMBRELLA:
        return "ACTORMESH_HPP"
    return "ACTORMESH_" + re.sub(r"[^A-Za-z0-9]", "_", name.removeprefix(PREFIX)).upper()


def guard_problem(text, name):
    """Why the text of public header `name` is not guarded as it should be, or ""."""
    guard = guard_of(name)
    if re.search(r"^\s*#\s*pragma\s+once", text, re.MULTILINE):
        return f"uses #pragma once; guard it with #ifndef {guard} instead"
    directives = re.findall(r"^\s*#\s*(\w+)[ \t]*(\S*)", text, re.MULTILINE)
    if len(directives) < 2 or directives[0] != ("ifndef", guard) or directives[1] != ("define", guard):
        return f"does not begin with #ifndef {guard} / #define {guard}"
    if directives[-1][0] != "endif":
        return f"does not end with the #endif of {guard}"
    return ""


def violations(source):
    """Every (file, what) of `source` that breaks a rule, sorted: a public header named by its tree
    path (what: the include), or a public header without its guard (what: why)."""
    public = public_headers(source)
    found = []
    for tree in sorted(public | {UMBRELLA}):
        path = tree_path(source, tree)
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                problem = guard_problem(f.read(), tree if tree == UMBRELLA else PREFIX + tree)
            if problem:
                found.append((os.path.relpath(path, source), problem))
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
    for relative, what in found:
        if what.endswith(".hpp"):
            print(f"{relative}: includes \"{what}\": a public header; write \"{PREFIX}{what}\"")
        else:
            print(f"{relative}: a public header that {what}")
    if found:
        print(f"public header names: {len(found)} problem(s)")
        return 1
    print(f"public header names: the {len(public_headers(source))} public headers each have their macro guard, "
          f"and every include of one uses its installed name")
    return 0


def self_check():
    """The check refuses a public header named by its tree path and accepts internal headers so named."""
    with tempfile.TemporaryDirectory() as tree:
        def write(relative, text):
            checker_cli.write_file(tree, relative, text)
        def guarded(name, body):
            guard = guard_of(name)
            return f"// {name}\n#ifndef {guard}\n#define {guard}\n{body}#endif // {guard}\n"
        write(UMBRELLA, guarded(UMBRELLA, '#include "actormesh/actors/a.hpp"\n'))
        write("actors/a.hpp", guarded("actormesh/actors/a.hpp", '#include "actormesh/actors/b.hpp"\n'))
        write("actors/b.hpp", guarded("actormesh/actors/b.hpp", ""))
        write("actors/detail/c.hpp", '#include "actormesh/actors/a.hpp"\n')
        write("devices/d.cpp", '#include "actors/detail/c.hpp"\n#include "actormesh/actors/b.hpp"\n')
        if violations(tree):
            print(f"public header names self-check: a tree that keeps the rule was refused: {violations(tree)}")
            return 1
        write("devices/e.cpp", '#include "actors/b.hpp"\n')
        write("tools/f.cpp", '#include "actors/a.hpp"\n')
        write("actors/b.hpp", "#pragma once\n")
        found = [(f, w.split(";")[0]) for f, w in violations(tree)]
        if found != [("actors/b.hpp", "uses #pragma once"), ("devices/e.cpp", "actors/b.hpp"),
                     ("tools/f.cpp", "actors/a.hpp")]:
            print(f"public header names self-check: expected three refusals, got {found}")
            return 1
        write("actors/b.hpp", "#ifndef WRONG_NAME\n#define WRONG_NAME\n#endif\n")
        if not violations(tree)[0][1].startswith("does not begin with #ifndef ACTORMESH_ACTORS_B_HPP"):
            print(f"public header names self-check: a guard of the wrong name passed: {violations(tree)}")
            return 1
    print("public header names self-check: public headers without their guard, or named by their tree paths, "
          "are refused")
    return 0


if __name__ == "__main__":
    checker_cli.run(__doc__.splitlines()[0], check, self_check)
