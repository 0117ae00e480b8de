#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the source tree against docs/layout.md: every #include "..." points to a folder at or
below the including file's own in the documented order, no source file is over 500 lines, and a
path in a comment or in the documentation (README.md, docs/, tests/) that starts with one of the
tree's folders names a file that exists, and every source file carries its SPDX license line.

    scripts/check-layout.py [SOURCE_DIR]     (default: this script's repository)

Prints each violation as file:line: what, and exits 1 when there is one."""
import os
import re
import sys

MAX_LINES = 500
# Every source file says its license as the BPF programs say theirs to the kernel ("GPL").
SPDX = "SPDX-License-Identifier: GPL-2.0-only"
# Files allowed over MAX_LINES while they are being split (none today): each one named, with why.
ALLOWED_LONG: set[str] = set()
# Folders of no layer: the build's and the packaging's own files, the scripts.
OUTSIDE = {"cmake", "docs", "packaging", "scripts"}
SOURCE = re.compile(r"\.(c|h|cpp|hpp|cc|in|cmake|sh|py)$|^CMakeLists\.txt$")
CODE = re.compile(r"\.(c|h|cpp|hpp|cc|in)$")
# The include directories the CMake files give (target_include_directories), the tree's root first.
INCLUDE_DIRS = ["", "bpf", "tests/support", "tests/programs/merge"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
# A comment's start: //, /*, a block comment's continuation line, or # (CMake, shell, python).
COMMENT = re.compile(r"//|/\*|^\s*\*|^\s*#(?!\s*(include|define|if|endif|else|elif|pragma|undef))")
PATH = re.compile(r"(?<![\w/.<$@{-])((?:[\w.-]+/)+[\w.-]*\w\.(?:h|cpp|c|md|sh|py|txt|json|cmake|in))\b")


def read_order(root):
    """{folder: rank} from the first fenced block after '## Order' in docs/layout.md."""
    text = open(os.path.join(root, "docs", "layout.md")).read()
    block = re.search(r"^## Order\s*\n```\n(.*?)\n```", text, re.M | re.S)
    if not block:
        sys.exit("docs/layout.md: no ```-block after '## Order'")
    return {f: rank for rank, line in enumerate(block.group(1).splitlines()) for f in line.split()}


def source_files(root):
    for dirpath, dirs, files in os.walk(root):
        # A build directory (anywhere: build/, build-asan/) is recognized by its CMake cache.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        for name in sorted(files):
            if SOURCE.search(name):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def markdown_files(root):
    """The documentation: README.md and every .md file of docs/ and tests/."""
    for path in ["README.md"] + [os.path.join(d, n) for d in ("docs", "tests")
                                 for n in sorted(os.listdir(os.path.join(root, d)))]:
        if path.endswith(".md") and os.path.isfile(os.path.join(root, path)):
            yield path


def folder_of(path, order):
    """The deepest folder of the order holding path, or None."""
    parts = path.split("/")[:-1]
    for n in range(len(parts), 0, -1):
        if "/".join(parts[:n]) in order:
            return "/".join(parts[:n])
    return None


def resolve(root, including, name):
    """The repository file an #include "name" of `including` reads, None when not ours."""
    candidates = [os.path.join(os.path.dirname(including), name)]
    candidates += [os.path.join(d, name) for d in INCLUDE_DIRS]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)) or os.path.isfile(os.path.join(root, c + ".in")):
            return c
    if name.endswith(".skel.h"):  # generated from <name>.bpf.c, wherever that lies
        bpf_source = name[: -len(".skel.h")] + ".bpf.c"
        for dirpath, _, files in os.walk(root):
            if bpf_source in files and "CMakeCache.txt" not in os.listdir(dirpath):
                return os.path.relpath(os.path.join(dirpath, bpf_source), root)
    if name == "vmlinux.h":  # generated for the BPF programs
        return "bpf/vmlinux.h"
    return None


def check_includes(root, path, lines, order, problems):
    own = folder_of(path, order)
    for number, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = resolve(root, path, m.group(1))
        if target is None:
            problems.append(f"{path}:{number}: cannot find \"{m.group(1)}\" in the tree")
            continue
        theirs = folder_of(target, order)
        if own is None or theirs is None:
            continue
        if order[theirs] > order[own]:
            problems.append(f"{path}:{number}: {own}/ includes {target}, of {theirs}/ above it "
                            "(docs/layout.md)")


def check_comment_paths(root, path, lines, top_folders, problems):
    prose = path.endswith(".md")  # documentation: every line
    for number, line in enumerate(lines, 1):
        m = None if prose else COMMENT.search(line)
        if not prose and not m:
            continue
        for named in PATH.findall(line if prose else line[m.start():]):
            if named.split("/")[0] not in top_folders:
                continue  # the kernel's, a library's, or relative to somewhere else
            if any(os.path.exists(os.path.join(root, p)) for p in (named, named + ".in")):
                continue
            problems.append(f"{path}:{number}: names {named}, which does not exist")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                           else os.path.join(os.path.dirname(__file__), ".."))
    order = read_order(root)
    top_folders = {f.split("/")[0] for f in order} | OUTSIDE
    problems = []
    for path in source_files(root):
        with open(os.path.join(root, path), errors="replace") as f:
            lines = f.read().splitlines()
        if len(lines) > MAX_LINES and path not in ALLOWED_LONG:
            problems.append(f"{path}: {len(lines)} lines, over {MAX_LINES}: split it")
        parent = os.path.dirname(path)
        if (parent and parent.split("/")[0] not in OUTSIDE and folder_of(path, order) is None
                and not any(f.startswith(parent + "/") for f in order)):
            problems.append(f"{path}: its folder is not in docs/layout.md's order")
        if CODE.search(path):
            check_includes(root, path, lines, order, problems)
        if not any(SPDX in line for line in lines[:3]):
            problems.append(f"{path}: no '{SPDX}' in its first lines (LICENSE)")
        check_comment_paths(root, path, lines, top_folders, problems)
    for path in markdown_files(root):
        with open(os.path.join(root, path), errors="replace") as f:
            check_comment_paths(root, path, f.read().splitlines(), top_folders, problems)
    for path in sorted(ALLOWED_LONG):
        full = os.path.join(root, path)
        if not os.path.exists(full) or len(open(full, errors="replace").readlines()) <= MAX_LINES:
            print(f"note: {path} is no longer over {MAX_LINES} lines: take it out of ALLOWED_LONG")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)" if problems else "layout: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
