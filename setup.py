"""Map the repository layout onto the single `mithril` import package.

DESIGN.md keeps services/, gateway/ and benchmark/ at the top of the repository while
everything installs under `mithril.*`; pyproject.toml cannot compute that package list,
so this file does, from the folders themselves.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOTS = {
    "mithril": "mithril",
    "mithril.services": "services",
    "mithril.gateway": "gateway",
    "mithril.benchmark": "benchmark",
}


def packages() -> list[str]:
    found: list[str] = []
    for prefix, folder in ROOTS.items():
        if not Path(folder, "__init__.py").exists():
            continue
        found.append(prefix)
        # Namespace discovery so data folders (scanner rules) ship as packages too.
        found.extend(
            f"{prefix}.{name}"
            for name in find_namespace_packages(folder, exclude=["*__pycache__*", "results*"])
        )
    return found


setup(packages=packages(), package_dir=ROOTS)
