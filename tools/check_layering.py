#!/usr/bin/env python3
"""Fails (exit 1) on an #include that ARCHITECTURE.md §2 does not allow.

A file in src/<module>/ may include "<other>/..." only when <other> is in ALLOWED[<module>].
Third-party headers (<...>) are not checked here; the CMake link lines bound those.
Usage: check_layering.py SRC_DIR
"""
import pathlib
import re
import sys

ALLOWED = {
    "core": set(),
    "tensor": {"core"},
    "protocol": {"core"},
    "text": {"core"},
    "structured": {"core"},  # structured outputs: grammars, compilers, matcher, token masks
    "ipc": {"core", "protocol"},
    "kernels": {"tensor", "core"},
    "comm": {"tensor", "core"},
    "model": {"kernels", "comm", "tensor", "core"},
    "engine": {"protocol", "ipc", "core"},
    "worker": {"structured", "model", "kernels", "comm", "tensor", "protocol", "ipc", "core"},
    "executor": {"engine", "worker", "comm", "ipc", "protocol", "core"},
    "router": {"protocol", "ipc", "core"},
    "http": {"core"},
    "ui": {"http", "core"},  # the web UI's embedded files (generated source, ui/ built by Vite)
    "server": {"structured", "http", "ui", "router", "text", "protocol", "core"},
    "cluster": {"http", "ui", "core"},
    "apps": None,  # anything
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    errors = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".hpp", ".cc"):
            continue
        module = path.relative_to(src).parts[0]
        if module not in ALLOWED:
            errors.append(f"{path}: unknown module '{module}' (not in ARCHITECTURE.md §2)")
            continue
        allowed = ALLOWED[module]
        if allowed is None:
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if target not in ALLOWED:
                continue  # a same-module subfolder include like "jinja/lexer.h"
            if target != module and target not in allowed:
                errors.append(
                    f"{path}:{lineno}: module '{module}' may not include '{target}/' "
                    f"(allowed: {', '.join(sorted(allowed)) or 'nothing'})")
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} forbidden include(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
