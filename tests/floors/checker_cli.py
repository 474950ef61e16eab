"""What the tree checkers share: the command line (--source ROOT checks the repository, --self-check
checks the checker on made-up trees) and writing those trees."""
import argparse
import os
import sys


def write_file(tree, relative, text):
    """Writes `text` to `relative` under `tree`, making its folders."""
    path = os.path.join(tree, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run(description, check, self_check):
    """Parses the arguments, runs `check(source)` or `self_check()`, and exits with its status."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--source", help="the repository's root")
    parser.add_argument("--self-check", action="store_true", help="check the checker on made-up trees")
    args = parser.parse_args()
    if args.self_check:
        sys.exit(self_check())
    if not args.source:
        parser.error("--source is required")
    sys.exit(check(args.source))
