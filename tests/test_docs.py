"""The docs hold together: every relative link in the README, docs/ and the package READMEs points at a file that
exists (and, into a Markdown file, at a heading it has), and the README's layers are the import-linter contract's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md")),
         *sorted((ROOT / "src" / "aoi").rglob("README.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"^```.*?^```$|`[^`\n]*`", re.S | re.M)  # links inside code are text


def links(page: Path) -> list[str]:
    """Return the relative targets a page links to (web addresses and mail left out)."""
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def anchor(heading: str) -> str:
    """Return the anchor GitHub gives a heading.

    Example:
        >>> anchor("Echo: sampling and training decoupled, on Ray")
        'echo-sampling-and-training-decoupled-on-ray'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Return the anchors of a Markdown page's headings."""
    text = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_the_pages_have_links_to_check():
    assert len(PAGES) > 20 and len(links(ROOT / "README.md")) >= 10


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if not found.exists():
            broken.append(f"{target} (no file {found})")
        elif fragment and found.suffix == ".md" and fragment not in anchors(found):
            broken.append(f"{target} (no heading with anchor #{fragment} in {found.name})")
    assert not broken, f"{page.relative_to(ROOT)} links to what is not there: {broken}"


def test_the_readme_shows_the_layers_of_the_import_linter_contract():
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Architecture\n", 1)[1]
    picture = re.search(r"^```\n(.*?)^```$", section, re.S | re.M).group(1).splitlines()
    assert picture == contract["layers"], "the README's Architecture picture and pyproject.toml's layers differ"
