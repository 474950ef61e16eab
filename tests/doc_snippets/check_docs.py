#!/usr/bin/env python3
"""Compiles the documented usage and the public headers as a user's program would (ctest
unit/doc_snippets; doc/testing.md).

1. `cmake --install BUILD --component headers` puts the installed headers under WORK/run-*/prefix
   (a folder per run, removed when it passes), and every TU below sees only that tree's
   `-I .../prefix/include`, as a user of the installed package does: a public header
   that includes a header the install leaves out fails here.
2. The install holds exactly the headers actormesh.hpp reaches (a header nothing public reaches is
   internal and fails the test), and every one of them (detail/ ones too) is compiled alone in a TU
   of its own: a header that is not self-contained, or warns, fails.
3. Every ```cpp block of README.md and doc/*.md is compiled. A block with an #include or an
   `int main(` is a whole program and is compiled as it is. Any other block is a fragment: it
   becomes the body of a function `snippet_<line>()` in one TU per doc file, after prelude.hpp
   (actormesh.hpp and the standard headers the fragments use) and context/<doc>.hpp, which declares
   (extern, never defined: nothing is linked or run) the names the doc's text gives the fragment,
   such as `x` or `argc`. A fragment's own declarations shadow these. Fragments are compiled with
   -Wunused-variable and -Wunused-but-set-variable off (a pragma after the includes): the code that
   uses a fragment's last values is not in the fragment.

All of it with -std=c++20 -Wall -Wextra -Werror -fsyntax-only (-I, not -isystem: CMake would give
an imported target's headers as system headers and hide their warnings). `#line` directives make
the compiler name the doc file and line; a failing block is reported as `doc/x.md:N`.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
FENCE_OPEN = re.compile(r"^(\s*)```cpp\s*$")
WHOLE_PROGRAM = re.compile(r"^\s*#\s*include\b|\bint\s+main\s*\(", re.M)


class Block:
    def __init__(self, doc, line, code):
        self.doc = doc    # relative to the source tree: README.md, doc/sharding.md
        self.line = line  # the line of the block's first code line (after the fence)
        self.code = code
        self.whole = bool(WHOLE_PROGRAM.search(code))


def extract_blocks(source, docs):
    blocks = []
    for doc in docs:
        with open(os.path.join(source, doc), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            m = FENCE_OPEN.match(lines[i])
            if m:
                indent = m.group(1)
                j = i + 1
                while j < len(lines) and lines[j].strip() != "```":
                    j += 1
                if j == len(lines):
                    sys.exit(f"{doc}:{i + 1}: a ```cpp block that is never closed")
                code = "\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j])
                blocks.append(Block(doc, i + 2, code))
                i = j
            i += 1
    return blocks


def public_headers(cxx, include_dir):
    """The headers actormesh.hpp reaches in the install tree (itself included, detail/ ones too)."""
    deps = subprocess.run([cxx, "-std=c++20", "-x", "c++", "-MM", "-I", include_dir,
                           os.path.join(include_dir, "actormesh.hpp")],
                          capture_output=True, text=True)
    if deps.returncode != 0:
        sys.exit("the umbrella header's dependencies:\n" + deps.stderr)
    headers = []
    for word in deps.stdout.replace("\\\n", " ").split()[1:]:
        path = os.path.relpath(os.path.normpath(word), include_dir)
        if not path.startswith(".."):
            headers.append(path)
    return sorted(set(headers))


def installed_headers(include_dir):
    """Every header the install put under `include_dir`, relative to it."""
    found = []
    for root, _, files in os.walk(include_dir):
        found += [os.path.relpath(os.path.join(root, n), include_dir) for n in files if n.endswith(".hpp")]
    return sorted(found)


def c_string(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def write_units(work, source, headers, blocks):
    """Writes the TUs; returns [(path, description, [blocks in it])]."""
    units = []
    os.makedirs(work, exist_ok=True)
    for h in headers:
        path = os.path.join(work, "header_" + re.sub(r"[^A-Za-z0-9]", "_", h) + ".cpp")
        with open(path, "w") as f:
            f.write(f'#include "{h}"\n')
        units.append((path, f"header {h}", []))
    fragments = {}
    for b in blocks:
        if b.whole:
            path = os.path.join(work, "program_" + re.sub(r"[^A-Za-z0-9]", "_", b.doc) + f"_{b.line}.cpp")
            with open(path, "w") as f:
                f.write(f'#line {b.line} "{c_string(b.doc)}"\n{b.code}\n')
            units.append((path, f"{b.doc}:{b.line}", [b]))
        else:
            fragments.setdefault(b.doc, []).append(b)
    here = os.path.dirname(os.path.abspath(__file__))
    for doc, group in fragments.items():
        stem = os.path.splitext(os.path.basename(doc))[0]
        path = os.path.join(work, "fragments_" + re.sub(r"[^A-Za-z0-9]", "_", doc) + ".cpp")
        out = [f"// The fragments of {doc}, one function each.", '#include "prelude.hpp"']
        context = os.path.join(here, "context", stem + ".hpp")
        if os.path.exists(context):
            out.append(f'#include "context/{stem}.hpp"')
        # A fragment's last values are for code the doc does not show: only these two warnings are
        # off, and only in the fragments (the headers and whole programs keep every warning).
        out.append('#pragma GCC diagnostic ignored "-Wunused-variable"')
        out.append('#pragma GCC diagnostic ignored "-Wunused-but-set-variable"')
        out.append(f"namespace doc_{re.sub(r'[^A-Za-z0-9]', '_', stem)} {{")
        for b in group:
            out.append(f"void snippet_{b.line}() {{")
            out.append(f'#line {b.line} "{c_string(b.doc)}"')
            out.append(b.code)
            written = sum(s.count("\n") + 1 for s in out)
            out.append(f'#line {written + 2} "{c_string(path)}"')
            out.append("}")
        out.append("}  // namespace")
        with open(path, "w") as f:
            f.write("\n".join(out) + "\n")
        units.append((path, f"the fragments of {doc}", group))
    return units


def compile_unit(cxx, include_args, unit):
    path, what, blocks = unit
    start = time.monotonic()
    r = subprocess.run([cxx, *FLAGS, *include_args, path], capture_output=True, text=True)
    return unit, r.returncode, r.stdout + r.stderr, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, help="the source tree (README.md, doc/)")
    ap.add_argument("--build", required=True, help="a configured build tree to install the headers from")
    ap.add_argument("--work", required=True, help="a folder for this test's runs (each run its own folder inside)")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--system-include", action="append", default=[],
                    help="a dependency's include folder the fragments need (fmt), if not a default one")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args()
    started = time.monotonic()

    # A folder of this run's own: two runs at once (two ctest runs in one build tree) stay apart.
    os.makedirs(args.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="run-", dir=args.work)
    prefix = os.path.join(work, "prefix")
    install = subprocess.run([args.cmake, "--install", args.build, "--component", "headers", "--prefix", prefix],
                             capture_output=True, text=True)
    if install.returncode != 0:
        sys.exit("cmake --install --component headers failed:\n" + install.stdout + install.stderr)
    include_dir = os.path.join(prefix, "include")
    if not os.path.exists(os.path.join(include_dir, "actormesh.hpp")):
        sys.exit(f"cmake --install --component headers put no actormesh.hpp in {include_dir}: "
                 "is the build tree configured from this cmake/Install.cmake?")

    docs = ["README.md"] + sorted("doc/" + n for n in os.listdir(os.path.join(args.source, "doc")) if n.endswith(".md"))
    blocks = extract_blocks(args.source, docs)
    headers = public_headers(args.cxx, include_dir)
    if not blocks or "actormesh.hpp" not in headers:
        sys.exit(f"found {len(blocks)} ```cpp blocks and {len(headers)} public headers: nothing to check?")
    # The install is exactly the public surface: a header nothing public reaches is internal.
    unreached = sorted(set(installed_headers(include_dir)) - set(headers))
    if unreached:
        print("installed but reached from no public header (internal headers stay out of the install): "
              + ", ".join(unreached))
        return 1
    units = write_units(os.path.join(work, "units"), args.source, headers, blocks)
    include_args = ["-I", include_dir, "-I", os.path.dirname(os.path.abspath(__file__))]
    for d in args.system_include:
        include_args += ["-isystem", d]

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for unit, rc, output, seconds in pool.map(lambda u: compile_unit(args.cxx, include_args, u), units):
            path, what, unit_blocks = unit
            if rc == 0:
                continue
            # The blocks the diagnostics name (their lines run from b.line to the end of b's code).
            named = set()
            for doc, line in re.findall(r"^((?:README\.md|doc/[^:\s]+\.md)):(\d+):", output, re.M):
                for b in unit_blocks:
                    if b.doc == doc and b.line <= int(line) < b.line + b.code.count("\n") + 1:
                        named.add((b.doc, b.line))
            where = ", ".join(f"{d}:{l}" for d, l in sorted(named)) or what
            failures.append(f"FAILED: {where} (compiling {what}: {path})\n{output}")

    whole = sum(b.whole for b in blocks)
    print(f"doc snippets: {len(blocks)} ```cpp blocks from {len(docs)} files ({whole} whole programs, "
          f"{len(blocks) - whole} fragments), {len(headers)} public headers alone; {len(units)} TUs, "
          f"{len(failures)} failed, {time.monotonic() - started:.1f} s with {args.jobs} jobs")
    for f in failures:
        print(f)
    if failures:
        print(f"(the TUs are kept in {work})")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
