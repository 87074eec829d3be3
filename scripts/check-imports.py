#!/usr/bin/env python3
"""Fails when the crate's module import graph has a circle.

An arrow runs from a source file to the file of the module it names in a `use`
statement (`use crate::…`, `use super::…`, `use self::…`, grouped paths included)
or in a path written inline (`super::bench_acp::run(…)`).
A folder's `mod.rs` that re-exports its own children (`pub use child::X`) is the
folder's face, not a dependency, so those re-exports draw no arrow. Every strongly
connected group of two or more files is a circle and is printed with one of its
cycles. Run from the repository root: `python3 scripts/check-imports.py [ROOT ...]` (default `src`).
"""

import os
import re
import sys

USE_RE = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?use\s+([^;]+);", re.MULTILINE)
PATH_RE = re.compile(r"(?<![\w:])(crate|super)((?:::\w+)+)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def strip_tests(text):
    """Drops `#[cfg(test)] mod … { … }` blocks (test modules may import freely)."""
    out = []
    i = 0
    marker = re.compile(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{")
    while True:
        m = marker.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i : m.start()])
        depth = 1
        j = m.end()
        while j < len(text) and depth:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
            j += 1
        i = j
    return "".join(out)


def expand(tree):
    """`a::{b, c::{d, e}}` -> [['a','b'], ['a','c','d'], ['a','c','e']]."""
    tree = tree.strip()
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = tree[:i].rstrip(":").strip()
                inner = tree[i + 1 : tree.rindex("}")]
                parts, buf, d = [], "", 0
                for c in inner:
                    if c == "," and d == 0:
                        parts.append(buf)
                        buf = ""
                        continue
                    d += c == "{"
                    d -= c == "}"
                    buf += c
                parts.append(buf)
                base = [s for s in prefix.split("::") if s]
                result = []
                for p in parts:
                    if p.strip():
                        result.extend(base + sub for sub in expand(p))
                return result
            depth += 1
    path = re.split(r"\s+as\s+", tree)[0].strip()
    return [[s.strip() for s in path.split("::") if s.strip()]]


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}  # module path tuple -> file
        for dirpath, _, names in os.walk(root):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)[:-3].split(os.sep)
                if rel[-1] == "mod":
                    rel = rel[:-1]
                if rel in (["lib"], ["main"]):
                    rel = []
                self.files.setdefault(tuple(rel), full)

    def module_of(self, file):
        for module, f in self.files.items():
            if f == file:
                return module
        raise KeyError(file)

    def resolve(self, module, segments):
        """The deepest file a path reaches, or None for paths outside the crate."""
        if not segments:
            return None
        head = segments[0]
        if head == "crate":
            base, rest = (), segments[1:]
        elif head == "super":
            base, rest = module, segments
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif head == "self":
            base, rest = module, segments[1:]
        else:
            return None
        found = self.files.get(tuple(base))
        cur = tuple(base)
        for seg in rest:
            nxt = cur + (seg,)
            if nxt in self.files:
                cur = nxt
                found = self.files[nxt]
            else:
                break
        return found


def graph(crate):
    edges = {}
    for module, file in crate.files.items():
        with open(file, encoding="utf-8") as fh:
            text = strip_tests(strip_comments(fh.read()))
        targets = set()
        is_face = os.path.basename(file) == "mod.rs"
        for m in USE_RE.finditer(text):
            public = m.group(1) is not None
            for segments in expand(m.group(3)):
                target = crate.resolve(module, segments)
                if target is None or target == file:
                    continue
                if public and is_face:
                    child = crate.module_of(target)
                    if child[: len(module)] == module and len(child) > len(module):
                        continue  # the folder re-exporting its own child
                targets.add(target)
        # Paths written inline (`super::bench_acp::run(..)`, `crate::x::Y`) count too.
        body = USE_RE.sub("", text)
        for m in PATH_RE.finditer(body):
            segments = [m.group(1)] + [s for s in m.group(2).split("::") if s]
            target = crate.resolve(module, segments)
            if target is not None and target != file:
                targets.add(target)
        edges[file] = targets
    return edges


def circles(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_cycle(edges, group):
    members = set(group)
    start = group[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in edges[path[-1]] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            return path + [start]
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            cut = next(w for w in nxt if w in seen)
            return path[path.index(cut) :] + [cut]
        path.append(fresh[0])
        seen.add(fresh[0])


def main():
    roots = sys.argv[1:] or ["src"]
    failed = 0
    for root in roots:
        edges = graph(Crate(root))
        found = circles(edges)
        for group in found:
            cycle = " -> ".join(one_cycle(edges, group))
            print(f"import circle among {len(group)} files: {cycle}")
        if found:
            print(f"{len(found)} import circle(s) in {root}; move the shared piece to where both can import it")
            failed = 1
        else:
            print(f"no import circles in {root} ({len(edges)} files)")
    return failed


if __name__ == "__main__":
    sys.exit(main())
