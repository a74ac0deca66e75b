"""npm's manual and READMEs and the Rust toolchain's books as benign retrieved documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.benchmark import toolchain_docs
from mithril.benchmark.detection import DEV, HELD_OUT, held_out, load_sources
from mithril.domain import Origin

PARAGRAPH = "Run the command once to create the configuration, then edit it and run it again. " * 5


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _chapter(body: str) -> str:
    return (
        "<html><head><title>x</title></head><body><nav>Table of contents</nav>"
        f"<main>{body}</main><footer>Next chapter</footer></body></html>"
    )


@pytest.fixture
def npm_root(tmp_path: Path) -> Path:
    root = tmp_path / "npm"
    _write(root / "docs/content/commands/npm-install.md", f"### Synopsis\n\n{PARAGRAPH}")
    _write(root / "node_modules/tiny/README.md", f"# tiny\n\n{PARAGRAPH} tiny")
    _write(root / "node_modules/tiny/LICENSE.md", f"{PARAGRAPH} licence")
    _write(root / "README.md", "too short")
    return root


@pytest.fixture
def toolchains(tmp_path: Path) -> Path:
    root = tmp_path / "toolchains"
    for name in ("nightly-x86", "stable-x86"):
        html = root / name / "share/doc/rust/html"
        _write(
            html / "book/ch01-01-installation.html",
            _chapter(
                f'<h1 id="install"><a class="header" href="#install">Install</a></h1>'
                f"<p>{name} {PARAGRAPH}</p><pre><code>$ rustup update\n</code></pre>"
            ),
        )
        _write(html / "book/old-page.html", "<html><body>Redirecting…</body></html>")
        _write(html / "book/print.html", _chapter(f"<p>{PARAGRAPH} print</p>"))
        _write(html / "rust-by-example/hello.html", _chapter(f"<p>{PARAGRAPH} example</p>"))
    return root


def test_npm_reads_its_manual_then_the_readmes_and_no_other_file(npm_root: Path) -> None:
    found = list(toolchain_docs.npm_documents(npm_root))
    assert [c.distribution for c in found] == [
        "docs/content/commands/npm-install.md",
        "node_modules/tiny/README.md",
    ]
    assert found[0].text.startswith("### Synopsis")


def test_a_chapter_is_its_main_element_as_markdown() -> None:
    page = _chapter(
        '<h2 id="a"><a class="header" href="#a">Closures</a></h2>'
        '<p>A closure <a href="x.html">captures</a> its <code>env</code>.</p>'
        "<pre><code>let f = |x| x + 1;\n</code></pre>"
    )
    text = toolchain_docs.chapter_text(page)
    assert text is not None
    assert text.startswith("## Closures")
    assert "A closure captures its `env`." in text
    assert "let f = |x| x + 1;" in text
    assert "Table of contents" not in text and "Next chapter" not in text
    assert toolchain_docs.chapter_text("<html><body>Redirecting…</body></html>") is None


def test_rust_books_come_from_the_stable_toolchain_and_skip_print_pages_and_examples(
    toolchains: Path,
) -> None:
    found = list(toolchain_docs.rust_documents(toolchains))
    assert [c.distribution for c in found] == ["book/ch01-01-installation.html"]
    assert found[0].kind == "code"
    assert "stable-x86 " in found[0].text and "$ rustup update" in found[0].text


def test_a_document_gives_at_most_its_first_chunks(tmp_path: Path) -> None:
    many = "\n\n".join(f"Section {i}. {PARAGRAPH}" * 4 for i in range(30))
    _write(tmp_path / "npm/docs/content/big.md", many)
    found = list(toolchain_docs.npm_documents(tmp_path / "npm"))
    assert len(found) == toolchain_docs.MAX_CHUNKS
    assert found[0].text.startswith("Section 0.")


def test_rows_are_retrieved_benign_content_held_out_by_document(
    npm_root: Path, toolchains: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolchain_docs, "NPM_ROOT", npm_root)
    monkeypatch.setattr(toolchain_docs, "RUSTUP_TOOLCHAINS", toolchains)
    sources = load_sources(tmp_path / "no-datasets", documentation=True)
    npm = sources[toolchain_docs.NPM_SOURCE]
    assert [r.group for r in npm] == [
        "npm-docs:docs/content/commands/npm-install.md",
        "npm-docs:node_modules/tiny/README.md",
    ]
    rows = npm + sources[toolchain_docs.RUST_SOURCE]
    assert {(r.origin, r.label) for r in rows} == {(Origin.RETRIEVAL, 0)}
    assert all(r.split == (HELD_OUT if held_out(r.group) else DEV) for r in rows)


def test_no_npm_and_no_toolchain_means_no_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolchain_docs, "NPM_ROOT", tmp_path / "absent")
    monkeypatch.setattr(toolchain_docs, "RUSTUP_TOOLCHAINS", tmp_path / "absent")
    sources = load_sources(tmp_path, documentation=True)
    assert toolchain_docs.NPM_SOURCE not in sources
    assert toolchain_docs.RUST_SOURCE not in sources
