"""Write constraints.txt: every package a virtualenv holds, pinned, for `make venv`.

    python scripts/lock.py VENV_PYTHON

`make lock` runs it on a scratch venv resolved from pyproject.toml alone. The pins are what
the benchmarks and the training scripts read too: `benchmark/package_docs.py` cuts its rows
from the READMEs of the installed distributions, so a venv resolved on another day reads
other rows. A local version label (torch's `+cpu`) is dropped: `==2.13.0` matches the
build on this disk, and a label is not on the index. pip itself is not pinned (`make
venv` upgrades it first); Mithril's own editable install is left out.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = """\
# Every package `make venv` installs, at the version the benchmarks, the training scripts'
# rows and CI were last measured with (pip install -c constraints.txt -e '.[dev]').
# pyproject.toml says what Mithril needs; this file says what was installed. Refresh it
# with `make lock` (a fresh venv resolved from pyproject.toml alone, then frozen).
"""


def frozen(python: str) -> list[str]:
    """`pip freeze` of the venv whose interpreter is `python`, its own editable install
    left out."""
    return subprocess.run(
        [python, "-m", "pip", "freeze", "--all", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()


def pins(lines: Iterable[str]) -> list[str]:
    """`name==version` for each package of a `pip freeze`, pip itself and comments left
    out, local version labels dropped, in name order; a package installed from anything
    but a release (a path, a URL) cannot be pinned and stops the lock."""
    out = []
    for line in lines:
        if not line or line.startswith("#") or line.lower().startswith("pip=="):
            continue
        name, _, version = line.partition("==")
        if not version:
            raise SystemExit(f"not a pinned release, cannot lock it: {line}")
        out.append(f"{name}=={version.split('+')[0]}")
    return sorted(out, key=str.lower)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    lines = pins(frozen(sys.argv[1]))
    (ROOT / "constraints.txt").write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"constraints.txt: {len(lines)} pins")


if __name__ == "__main__":
    main()
