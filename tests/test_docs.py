"""The repository's Markdown holds together: every relative link and image points at a file that exists and
every ``#anchor`` at a heading of its target (GitHub's slugs), no doc names an internal issue number or a
commit hash, and docs/hosting.md names every setting the server reads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest

from crisp_server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
HOSTING = ROOT / "docs" / "hosting.md"


def markdown_files(root: Path = ROOT) -> list[Path]:
    """README.md, CHANGELOG.md and every other Markdown file at the top and in docs/."""
    return sorted([*root.glob("*.md"), *(root / "docs").glob("*.md")])


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line outside fenced code blocks, where ``#`` is a comment, not a heading,
    and ``[a](b)`` is code, not a link. Fences may be indented (inside list items)."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence is None and marker in ("```", "~~~"):
            fence = marker
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered, lower case, punctuation removed (letters, digits,
    ``_``, ``-`` and spaces stay), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_- ")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown file offers: its headings' slugs (a repeated one gets -1, -2, ...) and HTML
    ``id``/``name`` attributes."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        heading = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(re.findall(r"<[^>]*\s(?:id|name)=\"([^\"]+)\"", line))
    return found


@dataclass(frozen=True)
class Link:
    source: Path
    line: int
    target: str


_INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
_HTML = re.compile(r"<(?:img|a|source)\b[^>]*\s(?:src|href|srcset)=\"([^\"]+)\"", re.IGNORECASE)


def links(path: Path) -> Iterator[Link]:
    """Every link and image of ``path`` outside code: inline, reference-style and HTML ``src``/``href``."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        prose = re.sub(r"`[^`]*`", "", line)  # a code span's brackets are not a link
        for pattern in (_INLINE, _REFERENCE, _HTML):
            for target in pattern.findall(prose):
                yield Link(path, number, target)


def broken(link: Link, root: Path = ROOT) -> str | None:
    """Why ``link`` leads nowhere, or ``None``: a web address is not checked, a path must exist (from the
    file's folder, or from the repository's root when it starts with ``/``), and an anchor into Markdown
    must be one of its target's anchors."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", link.target, re.IGNORECASE):
        return None  # https:, mailto:, ...
    path_part, _, anchor = link.target.partition("#")
    path_part = unquote(path_part)
    if not path_part:
        target = link.source
    elif path_part.startswith("/"):
        target = root / path_part.lstrip("/")
    else:
        target = link.source.parent / path_part
    if not target.exists():
        return f"{path_part} does not exist"
    if anchor and target.suffix == ".md" and unquote(anchor) not in anchors(target.read_text(encoding="utf-8")):
        return f"{target.relative_to(root)} has no heading for #{anchor}"
    return None


def _where(link: Link) -> str:
    return f"{link.source.relative_to(ROOT)}:{link.line}: ({link.target})"


def test_every_link_and_image_between_the_markdown_files_leads_somewhere() -> None:
    problems = [
        f"{_where(link)} {why}"
        for path in markdown_files()
        for link in links(path)
        if (why := broken(link)) is not None
    ]
    assert problems == [], "\n".join(problems)


def test_the_docs_are_linked_from_the_readme() -> None:
    readme = {link.target.partition("#")[0] for link in links(ROOT / "README.md")}
    for name in ("hosting.md", "cluster.md", "performance.md", "development.md", "protocol.md", "rules.md"):
        assert f"docs/{name}" in readme, f"README.md does not link docs/{name}"


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A title\n\n## Same\n\n## Same\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md#a-title) [dup](docs/a.md#same-1) [gone](docs/b.md) [no](docs/a.md#nowhere)\n"
        '<img src="docs/missing.png">\n```\n[in code](nowhere.md)\n```\n[web](https://example.org/x)\n',
        encoding="utf-8",
    )
    found = {link.target: broken(link, tmp_path) for link in links(tmp_path / "README.md")}
    assert found == {
        "docs/a.md#a-title": None,
        "docs/a.md#same-1": None,
        "docs/b.md": "docs/b.md does not exist",
        "docs/a.md#nowhere": "docs/a.md has no heading for #nowhere",
        "docs/missing.png": "docs/missing.png does not exist",
        "https://example.org/x": None,
    }


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Play with friends", "play-with-friends"),
        ("Behind a reverse proxy: Caddy or nginx", "behind-a-reverse-proxy-caddy-or-nginx"),
        ("Game records: `crisp-record/1`", "game-records-crisp-record1"),
        ("Turn timer (host option: 30 or 60 seconds)", "turn-timer-host-option-30-or-60-seconds"),
        ("The host's lobby", "the-hosts-lobby"),
        ("CRISP_NATIVE and [the build](x.md)", "crisp_native-and-the-build"),
    ],
)
def test_slugs_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


# What a reviewer greps for ("issue 19", or a commit hash followed by a space), and a commit hash anywhere
# else: a word of 7 to 40 hex digits with a letter and a digit in it (so 31536000 is a number, not a hash).
_HISTORY = re.compile(
    r"(?i:issue [0-9]+)|[0-9a-f]{7,} |\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b",
)


def test_no_doc_names_an_issue_number_or_a_commit_hash() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}"
        for path in markdown_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in _HISTORY.finditer(line)
    ]
    assert found == [], "\n".join(found)


def test_the_history_pattern_finds_what_it_is_for() -> None:
    assert _HISTORY.search("measured for issue 19 on a quiet machine")
    assert _HISTORY.search("Issue 7's note")
    assert _HISTORY.search("measured at 22a9bea on a quiet machine")
    assert _HISTORY.search("once after it (b8e84c8).")
    for fine in ("2,000 rooms, 10,000 connections", "max-age=31536000", "a deadbeef-free text", "an issue note"):
        assert _HISTORY.search(fine) is None, fine


def settings_variables() -> set[str]:
    """Every environment variable the server reads: each ``Settings`` field as ``CRISP_<NAME>``, ``PORT``,
    and the ones the package reads itself (``CRISP_NATIVE``)."""
    names = {f"CRISP_{field.upper()}" for field in Settings.model_fields} | {"PORT"}
    for source in (ROOT / "crisp_server").rglob("*.py"):
        names.update(re.findall(r"environ(?:\.get)?[(\[]\s*\"([A-Z][A-Z0-9_]*)\"", source.read_text(encoding="utf-8")))
    return names


def test_every_setting_is_named_in_the_hosting_guide() -> None:
    text = HOSTING.read_text(encoding="utf-8")
    missing = sorted(name for name in settings_variables() if f"`{name}`" not in text)
    assert missing == [], f"docs/hosting.md does not name {missing}"
    assert "CRISP_NATIVE" in settings_variables()  # the scan of the package's own reads works


def test_the_hosting_guides_settings_table_names_only_real_settings() -> None:
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]*)`", HOSTING.read_text(encoding="utf-8"), re.MULTILINE)
    assert rows, "docs/hosting.md has no settings table"
    assert sorted(set(rows) - settings_variables()) == []
