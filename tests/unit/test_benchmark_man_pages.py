"""The machine's manual pages as a benign source of retrieved documentation, rendered by the
real groff."""

from __future__ import annotations

import gzip
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from mithril.benchmark import detection, man_pages, toolchain_docs
from mithril.benchmark.detection import DEV, HELD_OUT, held_out, load_sources
from mithril.domain import Origin

pytestmark = pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")

WORDS = (
    "The daemon reads its configuration once at start and again on a hangup signal, so a"
    " changed file takes effect without a restart. Settings that name a directory must name"
    " one the daemon may write to, or it refuses to start and says which one it could not"
    " use. "
)


def _page(name: str, section: int, sections: int = 1) -> str:
    said = f"{name} says: {WORDS}"
    body = "".join(f".SH PART{n}\n{said * 3}\n.PP\n{said * 2}\n" for n in range(sections))
    return (
        f'.TH {name.upper()} {section} "2026-12-06" "thing 1.0" "Thing Manual"\n'
        f".SH NAME\n{name} \\- keep a thing running\n"
        f".SH OPTIONS\n.TP\n.B \\-\\-config=FILE\n{WORDS}\n{body}"
    )


def _bsd_page(name: str) -> str:
    """A page in the BSD macros (mdoc), which hyphenate unless told not to."""
    words = (
        "Upon receipt of the request, the server calls a dispatch routine to perform the"
        " requested service, and the internationalization considerations, notwithstanding,"
        " remain characteristically incomprehensible to the administrators. "
    )
    return (
        f".Dd December 6, 2026\n.Dt {name.upper()} 3\n.Os\n.Sh NAME\n.Nm {name}\n"
        f".Nd keep a thing running\n.Sh DESCRIPTION\n{words * 6}\n"
    )


def _write(root: Path, relative: str, text: str, zipped: bool = True) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if zipped else data)
    return path


@pytest.fixture
def man_root(tmp_path: Path) -> Path:
    root = tmp_path / "man"
    _write(root, "man1/alpha.1.gz", _page("alpha", 1))
    _write(root, "man7/beta.7", _page("beta", 7), zipped=False)
    _write(root, "man3/gamma.3.gz", _bsd_page("gamma"))
    _write(root, "man1/alias.1.gz", ".so man1/alpha.1\n")  # only names another page
    (root / "man1/linked.1.gz").symlink_to(root / "man1/alpha.1.gz")
    _write(root, "man1/binary.1", "\0\1" + _page("binary", 1), zipped=False)
    _write(root, "man1/huge.1", "x" * (man_pages.MAX_BYTES + 1), zipped=False)
    _write(root, "fr/man1/alpha.1.gz", _page("alphafr", 1))  # not English
    return root


def test_english_pages_are_rendered_as_man_shows_them(man_root: Path) -> None:
    found = list(man_pages.documents(man_root))
    assert {c.kind for c in found} == {"man1", "man3", "man7"}
    texts = "\n".join(c.text for c in found)
    assert "NAME" in texts and "alpha - keep a thing running" in texts
    assert "beta - keep a thing running" in texts
    # Rendered: no roff requests, no overstrike, words not padded to justify the lines.
    assert ".SH" not in texts and "\b" not in texts and "\\-" not in texts
    assert "--config=FILE" in texts
    body = [line.strip() for line in texts.splitlines() if line.startswith(" ")]
    padded = [line for line in body if re.search(r"[^.\s]  +\S", line)]
    assert body and not padded
    assert not [line for line in body if line.endswith(("\u2010", "-"))]  # nor hyphenated
    assert "alphafr" not in texts


def test_links_sourced_pages_binary_and_large_files_are_skipped(man_root: Path) -> None:
    assert man_pages.page_files(man_root) == sorted(
        [
            man_root / "man1/alias.1.gz",
            man_root / "man1/alpha.1.gz",
            man_root / "man1/binary.1",
            man_root / "man1/huge.1",
            man_root / "man3/gamma.3.gz",
            man_root / "man7/beta.7",
        ]
    )
    assert man_pages.source_of(man_root / "man1/alias.1.gz") is None
    assert man_pages.source_of(man_root / "man1/binary.1") is None
    assert man_pages.source_of(man_root / "man1/huge.1") is None
    assert "alpha" in (man_pages.source_of(man_root / "man1/alpha.1.gz") or "")


def test_a_page_and_a_package_give_at_most_their_limits(tmp_path: Path) -> None:
    root = tmp_path / "man"
    for n in range(8):
        _write(root, f"man1/tool{n}.1.gz", _page(f"tool{n}", 1, sections=6))
    found = list(man_pages.documents(root))
    assert len(found) == man_pages.MAX_CHUNKS  # one package: every page is unowned here
    pages = [set(re.findall(r"\btool\d\b", c.text)) for c in found]
    assert all(len(names) == 1 for names in pages)  # a chunk is cut from one page
    per_page = Counter(name for names in pages for name in names)
    assert max(per_page.values()) == man_pages.MAX_CHUNKS_PER_PAGE
    assert len({c.text for c in found}) == len(found)


def test_pages_are_grouped_by_their_debian_package() -> None:
    page = Path("/usr/share/man/man1/ls.1.gz")
    if shutil.which("dpkg-query") is None or not page.is_file():
        pytest.skip("no dpkg database, or coreutils' manual is not installed")
    assert man_pages.owners([page, Path("/nonexistent/x.1")]) == {
        page: "coreutils",
        Path("/nonexistent/x.1"): man_pages.UNOWNED,
    }


def test_rows_are_benign_retrieved_content_held_out_by_package(
    man_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(man_pages, "MAN_ROOT", man_root)
    for other in ("_python_docs", "_package_docs", "_debian_docs"):  # slow, and not asked
        monkeypatch.setattr(detection, other, list)
    for other in ("npm_documents", "rust_documents"):
        monkeypatch.setattr(toolchain_docs, other, list)
    rows = load_sources(tmp_path / "no-datasets", documentation=True)[man_pages.SOURCE]
    group = f"man-pages:{man_pages.UNOWNED}"
    split = HELD_OUT if held_out(group) else DEV
    assert rows and {(r.split, r.origin, r.label, r.group) for r in rows} == {
        (split, Origin.RETRIEVAL, 0, group)
    }
    assert man_pages.SOURCE not in load_sources(tmp_path, documentation=True, manual=False)
    monkeypatch.setattr(man_pages, "MAN_ROOT", tmp_path / "absent")
    assert man_pages.SOURCE not in load_sources(tmp_path, documentation=True)
