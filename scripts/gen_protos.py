"""Regenerate the Python stubs under mithril/ from protos/ (python -m grpc_tools.protoc).

buf lints and checks breaking changes; generation uses grpcio-tools' bundled protoc so
the stubs match the grpcio runtime that ships with them. Output is deterministic, so
`make check-protos` can regenerate into a scratch folder and diff.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"


def generate(out_dir: Path) -> None:
    protos = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    well_known = str(resources.files("grpc_tools") / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTOS}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed")
    # Every generated directory is a regular package so setuptools ships it.
    for proto in protos:
        package_dir = out_dir / Path(proto).parent
        while package_dir != out_dir:
            (package_dir / "__init__.py").touch()
            package_dir = package_dir.parent


def generated_files(root: Path) -> dict[str, bytes]:
    """Relative path -> content of every generated stub under root/mithril."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for pattern in ("*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py")
        for path in (root / "mithril").rglob(pattern)
    }


def check() -> int:
    """Regenerate into a scratch folder and report any difference from the committed stubs."""
    with tempfile.TemporaryDirectory() as scratch:
        generate(Path(scratch))
        fresh = generated_files(Path(scratch))
    committed = generated_files(ROOT)
    stale = sorted(
        name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name)
    )
    for name in stale:
        print(f"out of date: {name}", file=sys.stderr)
    if stale:
        print("run `make protos` and commit the result", file=sys.stderr)
    return 1 if stale else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT, help="output root (default: repo root)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    if args.check:
        sys.exit(check())
    args.out.mkdir(parents=True, exist_ok=True)
    generate(args.out)


if __name__ == "__main__":
    main()
