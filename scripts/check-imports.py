#!/usr/bin/env python3
"""Fails when the crate's module import graph has a circle, or when one top-level
part of Hecate imports a part it must never import.

An arrow runs from a source file to the file of the module it names in a `use`
statement (`use crate::…`, `use super::…`, `use self::…`, a path that starts with a
child module's name such as `use bus::EventBus`, grouped paths included) or in a
path written inline (`super::bench_acp::run(…)`, `gateway::GatewayState`). A name a
folder's `mod.rs` re-exports (`pub use child::X`) is followed to the child that
defines it, so `use super::X` is an arrow to that child, not to the folder's face;
the re-export itself draws no arrow. Every strongly connected group of two or more
files is a circle and is printed with one of its cycles.

For `src`, every `crate::…` path is also checked against the `NEVER` list of
arrows between the parts of `LAYERS` (the layering rules of
shared/ARCHITECTURE.md), by the part the path names as written; for
`benches/hub`, every `hecate::…` path is checked the same way as the part
`Benches`. `jsonl.rs`, `model_wire/`, `a2a_wire/` and `telemetry/` are leaves:
they import nothing else of Hecate's, and every part may import them.

An upward arrow inside a folder is an arrow from a file to the face (`mod.rs`, or
the `x.rs` beside an `x/` folder) of a folder that contains it: the face then both
names the file and serves it. Their number in `src` is printed, and more than
`UPWARD_LIMIT` fails the check; a folder's shared piece belongs in a sibling file.
Files that only unit tests compile (`#[cfg(test)] mod tests;`) are left out of
every measure.

Run from the repository root: `python3 scripts/check-imports.py [ROOT ...]`
(default `src`).
"""

import os
import re
import sys

USE_RE = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?use\s+([^;]+);", re.MULTILINE)
UPWARD_LIMIT = 35
PATH_RE = re.compile(r"(?<![\w:])(crate|super)((?:::\w+)+)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def strip_tests(text):
    """Drops `#[cfg(test)] mod … { … }` blocks (test modules may import freely)."""
    out = []
    i = 0
    marker = re.compile(r"#\[cfg\((?:all\()?test\b[^\]]*\]\s*mod\s+\w+\s*\{")
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
        self._reexports = {}
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
        test_only = set()
        test_mod = re.compile(r"#\[cfg\((?:all\()?test\b[^\]]*\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
        for module, full in self.files.items():
            for m in test_mod.finditer(strip_comments(read(full))):
                test_only.add(module + (m.group(1),))
        for module in list(self.files):
            if any(module[: len(t)] == t for t in test_only):
                del self.files[module]

    def module_of(self, file):
        for module, f in self.files.items():
            if f == file:
                return module
        raise KeyError(file)

    def children(self, module):
        """Names of the modules directly under `module`."""
        n = len(module)
        return {m[n] for m in self.files if len(m) == n + 1 and m[:n] == module}

    def resolve(self, module, segments):
        """The file a path reaches (following a face's re-exports to the child that
        defines the name), or None for paths outside the crate."""
        anchored = self.anchor(tuple(module), segments)
        if anchored is None:
            return None
        return self.walk(anchored[0], anchored[1], 0)

    def anchor(self, module, segments):
        """`(module, rest)` a path starts from (`crate`, `super`, `self` or a child
        module's name), or None for a path that leaves the crate."""
        if not segments:
            return None
        head = segments[0]
        if head == "crate":
            return (), list(segments[1:])
        if head == "super":
            base, rest = module, list(segments)
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            return base, rest
        if head == "self":
            return module, list(segments[1:])
        if module + (head,) in self.files:
            return module, list(segments)
        return None

    def walk(self, cur, rest, depth):
        found = self.files.get(cur)
        while rest:
            nxt = cur + (rest[0],)
            if nxt in self.files:
                cur, found, rest = nxt, self.files[nxt], rest[1:]
                continue
            target = self.reexports(cur).get(rest[0]) if depth < 16 else None
            if target is not None:
                return self.walk(target[0], target[1] + rest[1:], depth + 1)
            break
        return found

    def reexports(self, module):
        """`name -> (module, segments)` for the `pub use` items of `module`'s file."""
        cached = self._reexports.get(module)
        if cached is not None:
            return cached
        self._reexports[module] = {}
        file = self.files.get(module)
        table = {}
        if file is not None:
            text = strip_tests(strip_comments(read(file)))
            for m in USE_RE.finditer(text):
                if m.group(1) is None:
                    continue
                for segments, alias in expand_named(m.group(3)):
                    if not segments or segments[-1] in ("*", "self"):
                        continue
                    anchored = self.anchor(module, segments)
                    if anchored is not None:
                        table[alias] = anchored
        self._reexports[module] = table
        return table


def read(file):
    with open(file, encoding="utf-8") as fh:
        return fh.read()


def expand_named(tree):
    """Like `expand`, with the name each path is known by (its alias, if any)."""
    out = []
    for segments in expand(tree):
        out.append((segments, segments[-1] if segments else ""))
    aliased = re.findall(r"([\w:]+)\s+as\s+(\w+)", tree)
    for path, alias in aliased:
        last = path.split("::")[-1]
        for i, (segments, name) in enumerate(out):
            if segments and segments[-1] == last and name == last:
                out[i] = (segments, alias)
                break
    return out


def graph(crate):
    edges = {}
    for module, file in crate.files.items():
        text = strip_tests(strip_comments(read(file)))
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
        # Paths written inline (`super::bench_acp::run(..)`, `crate::x::Y`,
        # `child::f(..)`) count too.
        body = USE_RE.sub("", text)
        body = re.sub(r"pub\(in [^)]*\)", "pub", body)
        body = re.sub(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", "", body, flags=re.MULTILINE)
        heads = ["crate", "super"] + sorted(crate.children(module))
        inline = re.compile(r"(?<![\w:])(" + "|".join(map(re.escape, heads)) + r")((?:::\w+)+)")
        for m in inline.finditer(body):
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


# The parts of Hecate by path prefix (shared/ARCHITECTURE.md, the layer table),
# and the arrows between parts that must never exist.
LAYERS = [
    ("src/main.rs", "Cli"),
    ("src/cli/", "Cli"),
    ("src/config/", "Config"),
    ("src/bridges/", "Bridges"),
    ("src/engine/", "Engine"),
    ("src/runtimes/", "Runtimes"),
    ("src/adapters/", "Adapters"),
    ("src/store/", "Store"),
    ("src/jsonl.rs", "Jsonl"),
    ("src/model_wire/", "ModelWire"),
    ("src/a2a_wire/", "A2aWire"),
    ("src/telemetry/", "Telemetry"),
    ("src/domain/", "Domain"),
]
NEVER = {
    ("Bridges", "Store"), ("Bridges", "Adapters"), ("Bridges", "Runtimes"), ("Bridges", "Config"),
    ("Engine", "Bridges"), ("Engine", "Config"), ("Engine", "Cli"),
    ("Runtimes", "Engine"), ("Runtimes", "Store"), ("Runtimes", "Bridges"), ("Runtimes", "Cli"),
    ("Adapters", "Engine"), ("Adapters", "Runtimes"), ("Adapters", "Store"),
    ("Adapters", "Bridges"), ("Adapters", "Cli"),
    ("Store", "Engine"), ("Store", "Adapters"), ("Store", "Runtimes"), ("Store", "Bridges"),
    ("Store", "Cli"),
    ("Domain", "Engine"), ("Domain", "Adapters"), ("Domain", "Store"), ("Domain", "Jsonl"),
    ("Domain", "Runtimes"), ("Domain", "Bridges"), ("Domain", "Cli"), ("Domain", "Config"),
    ("Jsonl", "Domain"), ("Jsonl", "Engine"), ("Jsonl", "Store"),
    ("Domain", "ModelWire"), ("ModelWire", "Domain"), ("ModelWire", "Engine"), ("ModelWire", "Store"),
    ("ModelWire", "Adapters"), ("ModelWire", "Runtimes"), ("ModelWire", "Bridges"),
    ("ModelWire", "Cli"), ("ModelWire", "Config"), ("ModelWire", "Jsonl"),
    ("Domain", "Telemetry"), ("Telemetry", "Domain"), ("Telemetry", "Engine"), ("Telemetry", "Store"),
    ("Telemetry", "Adapters"), ("Telemetry", "Runtimes"), ("Telemetry", "Bridges"),
    ("Telemetry", "Cli"), ("Telemetry", "Config"),
    ("A2aWire", "Domain"), ("A2aWire", "Engine"), ("A2aWire", "Store"), ("A2aWire", "Adapters"),
    ("A2aWire", "Runtimes"), ("A2aWire", "Bridges"), ("A2aWire", "Cli"), ("A2aWire", "Config"),
    ("A2aWire", "Jsonl"), ("A2aWire", "ModelWire"), ("A2aWire", "Telemetry"),
    ("Benches", "Cli"), ("Benches", "Bridges"),
    ("Config", "Cli"), ("Config", "Bridges"),
}
# The crate's top-level modules, as `hecate::NAME` paths name them from benches.
TOP = {"cli": "Cli", "config": "Config", "bridges": "Bridges", "engine": "Engine",
       "runtimes": "Runtimes", "adapters": "Adapters", "store": "Store", "jsonl": "Jsonl",
       "model_wire": "ModelWire", "a2a_wire": "A2aWire", "telemetry": "Telemetry",
       "domain": "Domain"}


def part_of(file):
    path = file.replace(os.sep, "/")
    for prefix, part in LAYERS:
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return part
    return None


def layering(root, edges):
    """The arrows that break a never rule, as `file -> target (A -> B)` lines."""
    broken = []
    if os.path.normpath(root) == "src":
        # Judged by the path as written (`crate::engine::X` is an arrow to the
        # engine even when the engine re-exports X from an adapter), unit tests
        # included: a bridge's test builds its input as the engine hands it.
        for file in sorted(edges):
            a = part_of(file)
            text = strip_comments(read(file))
            seen = set()
            for m in re.finditer(r"(?<![\w:])crate::(\w+)", text):
                b = TOP.get(m.group(1))
                if a and b and (a, b) in NEVER and b not in seen:
                    seen.add(b)
                    broken.append(f"{file} -> crate::{m.group(1)} ({a} must never import {b})")
    elif os.path.normpath(root) == os.path.normpath("benches/hub"):
        for file in sorted(edges):
            text = strip_comments(read(file))
            for m in re.finditer(r"\bhecate::(\w+)", text):
                b = TOP.get(m.group(1))
                if b and ("Benches", b) in NEVER:
                    broken.append(f"{file} -> hecate::{m.group(1)} (Benches must never import {b})")
    return broken


def upward(crate, edges):
    """The arrows from a file to the face of a folder that contains it."""
    out = []
    for file, targets in sorted(edges.items()):
        module = crate.module_of(file)
        for target in sorted(targets):
            face = crate.module_of(target)
            if face and len(face) < len(module) and module[: len(face)] == face:
                out.append((file, target))
    return out


def main():
    roots = sys.argv[1:] or ["src"]
    failed = 0
    for root in roots:
        crate = Crate(root)
        edges = graph(crate)
        broken = layering(root, edges)
        for line in broken:
            print(f"layering: {line}")
        if broken:
            print(f"{len(broken)} arrow(s) in {root} break the layering rules of shared/ARCHITECTURE.md")
            failed = 1
        found = circles(edges)
        for group in found:
            cycle = " -> ".join(one_cycle(edges, group))
            print(f"import circle among {len(group)} files: {cycle}")
        if found:
            print(f"{len(found)} import circle(s) in {root}; move the shared piece to where both can import it")
            failed = 1
        else:
            print(f"no import circles in {root} ({len(edges)} files)")
        if os.path.normpath(root) == "src":
            ups = upward(crate, edges)
            print(f"{len(ups)} upward arrow(s) inside folders in {root} (limit {UPWARD_LIMIT})")
            if len(ups) > UPWARD_LIMIT:
                for file, target in ups:
                    print(f"upward: {file} -> {target}")
                print(f"too many upward arrows in {root}; move the face's shared piece to a sibling")
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
