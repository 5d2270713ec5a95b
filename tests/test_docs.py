"""The docs hold together: the README stays a newcomer's page that leads to every file of docs/,
and no link of the README, of docs/ or of contract/README.md points to a file or a heading that
is not there. (What the docs say is checked elsewhere: the commands they name in
tests/test_contract.py, the generated references by their drift test.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MOST_LINES = 300  # what a newcomer reads; the reference is in docs/

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks (a `# comment` in a shell block is no heading)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z]+:", target)]  # https:, mailto: are not ours to check


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens, a repeated one numbered."""
    found, times = set(), {}
    for heading in re.findall(r"^#{1,6} (.+)$", prose(path.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = times[slug] = times.get(slug, -1) + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def test_the_readme_is_a_newcomer_s_page():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MOST_LINES, (f"README.md has {lines} lines, at most {MOST_LINES}: move "
                                 "reference into the docs/ file of its topic")


def test_the_readme_leads_to_every_doc_and_only_to_docs_that_exist():
    linked = {(README.parent / t.split("#")[0]).resolve() for t in links(README)
              if t.startswith("docs/") and t.split("#")[0].endswith(".md")}
    present = {p.resolve() for p in DOCS.glob("*.md")}
    assert not linked - present, f"the README links to missing docs: {sorted(linked - present)}"
    assert not present - linked, ("docs the README does not link to (add each to its list "
                                  f"\"Where to read more\"): {sorted(present - linked)}")


def dead_links(pages: list[Path]) -> list[str]:
    dead = []
    for page in pages:
        for target in links(page):
            file, _, anchor = target.partition("#")
            found = (page.parent / file).resolve() if file else page
            if not found.exists():
                dead.append(f"{page.name}: {target} (no such file)")
            elif anchor and found.suffix == ".md" and anchor not in anchors(found):
                dead.append(f"{page.name}: {target} (no such heading)")
    return dead


def test_no_link_of_the_docs_is_dead():
    assert dead_links([README, ROOT / "contract" / "README.md", *sorted(DOCS.glob("*.md"))]) == []


def test_a_dead_link_is_found(tmp_path):
    """The check above can fail: a missing file and a missing heading are found, a heading's
    anchor as GitHub makes it is not, and a fenced block holds neither links nor headings."""
    page = tmp_path / "page.md"
    page.write_text("# A title: with punctuation\n\n## Again\n\n## Again\n\n"
                    "[ok](#a-title-with-punctuation) [ok](#again-1) [no](#nowhere) "
                    "[no](missing.md) ![ok](page.md) [ok](https://example.com)\n"
                    "```\n# not a heading\n[no](in-code.md)\n```\n")
    assert dead_links([page]) == ["page.md: #nowhere (no such heading)",
                                  "page.md: missing.md (no such file)"]
    assert anchors(page) == {"a-title-with-punctuation", "again", "again-1"}


def test_every_command_has_its_section_in_the_reference_and_the_man_pages():
    """Each command of the registry (and each that is not a tool) is described in
    docs/commands.md and in a man page, a tool that is also a group (`nexus run`) included."""
    from nexus_cli.catalog import load
    from nexus_cli.cli import EXTRA

    paths = {" ".join(t.path) for t in load().values() if t.cli} | set(EXTRA)
    documented = set(re.findall(r"^### nexus (.+)$", (DOCS / "commands.md").read_text(), re.M))
    manned = {title.lower().replace("\\-", "-") for page in (ROOT / "man").glob("nexus-*.1")
              for title in re.findall(r"^\.SH NEXUS (.+)$", page.read_text(), re.M)}
    assert paths - documented == set(), "run `python -m nexus_cli.gen`, then see nexus_cli/gen"
    assert paths - manned == set()


def test_a_new_tool_group_without_a_title_says_where_it_goes():
    """Adding a group is the one step beyond the feature: the generator names the file to edit
    rather than failing with a KeyError."""
    from nexus_cli.gen.manpages import GROUP_TITLES, group_title

    assert group_title("messages") == GROUP_TITLES["messages"]
    with pytest.raises(SystemExit, match=r"GROUP_TITLES in nexus_cli/core/registry\.py"):
        group_title("telepathy")
