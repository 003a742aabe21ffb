"""The web client's texts live in its catalogs (static/js/lang/<code>.js) and nowhere else: no prose in the
client's code or in index.html, the picker's languages are the catalog files, and a catalog names each of
its keys once. What a catalog holds (every key of English's, every text whole) is checked in a browser:
tests/browser/test_languages.py."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pytest

STATIC = Path(__file__).resolve().parents[1] / "static"
CATALOGS = STATIC / "js" / "lang"


class Literal(NamedTuple):
    offset: int
    line: int
    text: str  # a template's ${...} parts as "{}"
    before: str  # the code just before it, on its line and the ones above


#: After these, a "/" starts a regular expression (else it divides).
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_AFTER_WORDS = {"return", "typeof", "case", "of", "in", "do", "else", "void", "yield", "await"}


def js_literals(src: str) -> list[Literal]:
    """Every string and template literal of a JS source, outside comments and regular expressions; the
    code inside a template's ``${...}`` is read as code (its literals are listed too)."""
    out: list[Literal] = []
    n = len(src)
    last, last_word = "", ""

    def code(i: int, until_brace: bool) -> int:
        nonlocal last, last_word
        depth = 0
        while i < n:
            c = src[i]
            if until_brace and c == "}" and depth == 0:
                last, last_word = "}", ""
                return i + 1
            if c.isspace():
                i += 1
            elif src.startswith("//", i):
                end = src.find("\n", i)
                i = n if end < 0 else end
            elif src.startswith("/*", i):
                i = src.index("*/", i) + 2
            elif c in "'\"":
                j, chars = i + 1, []
                while src[j] != c:
                    chars.append(src[j : j + 2] if src[j] == "\\" else src[j])
                    j += 2 if src[j] == "\\" else 1
                out.append(Literal(i, src.count("\n", 0, i) + 1, "".join(chars), src[max(0, i - 80) : i]))
                i, last, last_word = j + 1, "s", ""
            elif c == "`":
                start = i
                i, parts, chars = i + 1, [], []
                while src[i] != "`":
                    if src[i] == "\\":
                        chars.append(src[i : i + 2])
                        i += 2
                    elif src.startswith("${", i):
                        parts.append("".join(chars))
                        chars = []
                        i = code(i + 2, True)
                    else:
                        chars.append(src[i])
                        i += 1
                parts.append("".join(chars))
                out.append(
                    Literal(start, src.count("\n", 0, start) + 1, "{}".join(parts), src[max(0, start - 80) : start])
                )
                i, last, last_word = i + 1, "s", ""
            elif c == "/" and (last in REGEX_AFTER or last_word in REGEX_AFTER_WORDS):
                j, in_class = i + 1, False
                while in_class or src[j] != "/":
                    if src[j] == "\\":
                        j += 1
                    elif src[j] == "[":
                        in_class = True
                    elif src[j] == "]":
                        in_class = False
                    j += 1
                j += 1
                while j < n and src[j].isalpha():
                    j += 1
                i, last, last_word = j, "r", ""
            elif c.isalnum() or c in "_$":
                j = i
                while j < n and (src[j].isalnum() or src[j] in "_$"):
                    j += 1
                last, last_word, i = "w", src[i:j], j
            else:
                if until_brace and c == "{":
                    depth += 1
                elif until_brace and c == "}":
                    depth -= 1
                last, last_word, i = c, "", i + 1
        return i

    code(0, False)
    return sorted(out)


#: Where a literal is shown or read out as it is: an attribute people see or hear, a text node's content, a
#: message box. Any word there is a text to translate.
SHOWN = re.compile(
    r"""(["']?(aria-label|aria-description|aria-valuetext|title|placeholder|alt|label)["']?\s*:"""
    r"""|\.(textContent|innerText|innerHTML|title|placeholder|alt)\s*=|setAttribute\(\s*["'](aria-label|title|alt|placeholder)["']\s*,"""
    r"""|\b(alert|confirm|prompt|toast|confirmDialog|setCustomValidity|createTextNode)\(|\.append\()\s*$"""
)
#: What reads as words to a person: a capital and small letters ("Draw"), words and spaces ("of spades"), or
#: the end of a sentence ("Saved.").
PROSE = re.compile(r"^\s*[A-ZÀ-Þ][a-zß-ÿ]|[A-Za-zÀ-ÿ]{2,}\s+[A-Za-zÀ-ÿ]{2,}|[A-Za-zÀ-ÿ][.!?…]\s*$")
LETTERS = re.compile(r"[A-Za-zÀ-ÿ]")
#: Code, not text: a module's path after import/from, a CSS class list, a selector, an HTML tag.
NOT_TEXT = re.compile(
    r"""(\b(from|import)\s*\(?\s*|class:\s*([\w.]+\s*\?\s*)?(["'`][^"'`]*["'`]\s*:\s*)?|querySelector(All)?\(\s*|\bh\(\s*|svg\(\s*"""
    r"""|createElement(NS)?\([^)]*|matchMedia\(\s*|\bAuthorization:\s*|headers:\s*\{\s*|addEventListener\(\s*)$"""
)


def prose_in_code(path: Path) -> list[tuple[int, str]]:
    """The literals of a module that people would read: words where a text is shown, or anything shaped
    as prose elsewhere (a child of h(...), a value handed on to be shown)."""
    found = []
    for lit in js_literals(path.read_text(encoding="utf-8")):
        if not LETTERS.search(lit.text) or NOT_TEXT.search(lit.before):
            continue
        if SHOWN.search(lit.before) or PROSE.search(lit.text):
            found.append((lit.line, lit.text))
    return found


#: Literals that look like words but are not texts to translate, each with its reason (path, text).
ALLOWED: dict[tuple[str, str], str] = {
    ("js/screens/home.js", "Crisp"): "the game's name, as the logo",
    ("js/screens/replay.js", "Crisp"): "the game's name, as the logo",
    ("js/screens/lobby.js", "Crisp"): "the game's name, as the shared link's title",
    ("js/main.js", "Crisp"): "the game's name, as the tab's title",
    ("js/screens/tv.js", "Crisp"): "the game's name, as the big screen's logo",
    ("js/main.js", "Crisp · {}"): "the game's name and the room's code, as the tab's title",
    ("js/screens/results.js", "Crisp"): "the call's name on a badge: the game's word in every language",
    ("js/screens/table.js", "Crisp"): "the call's name on a badge: the game's word in every language",
    ("js/i18n.js", "English"): "LANGUAGES: each language named in itself, the same in every language",
    ("js/i18n.js", "Deutsch"): "LANGUAGES",
    ("js/i18n.js", "Français"): "LANGUAGES",
    ("js/i18n.js", "Español"): "LANGUAGES",
    ("js/i18n.js", "Italiano"): "LANGUAGES",
    ("js/i18n.js", "Nederlands"): "LANGUAGES",
    ("js/screens/replay.js", "Content-Type"): "an HTTP header's name",
}


def client_modules() -> list[Path]:
    return sorted(p for p in (STATIC / "js").rglob("*.js") if CATALOGS not in p.parents)


class PageText(HTMLParser):
    """The texts of an HTML page a person may read: its text nodes (not its scripts' and styles'), and its
    shown attributes."""

    ATTRIBUTES = frozenset({"title", "alt", "aria-label", "placeholder", "aria-description", "label"})

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.code += tag in ("script", "style")
        self.texts += [v for k, v in attrs if k in self.ATTRIBUTES and v]
        if tag == "meta" and dict(attrs).get("name") == "description":
            self.texts.append(dict(attrs).get("content") or "")

    def handle_endtag(self, tag: str) -> None:
        self.code -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self.code and data.strip():
            self.texts.append(data.strip())


def test_the_scan_finds_texts_written_in_code(tmp_path: Path) -> None:
    """What the scan below must catch (and what it must leave: code that only looks like words)."""
    module = tmp_path / "m.js"
    module.write_text(
        """import { h } from "./dom.js";
// A comment: "Not a text."
const re = /Draw the card/g;
export function f(x) {
  toast("saved");
  el.textContent = `${x} left`;
  dialog.setAttribute("aria-label", "close");
  return h("p", { class: "muted small-print", title: "menu" }, "Take a seat", `Round ${x}`, "Copied!", "?");
}
h("button", { "data-key": "join" }, x ? t("a") : "Join");
const y = a / b / c;
const z = `${x ? "Round over." : "again"}`;
"""
    )
    assert [text for _, text in prose_in_code(module)] == [
        "saved",
        "{} left",
        "close",
        "menu",
        "Take a seat",
        "Round {}",
        "Copied!",
        "Join",
        "Round over.",
    ]
    page = PageText()
    page.feed('<title>Crisp</title><script>const a = "Hello there";</script><p>Loading…</p><img alt="A logo" />')
    assert page.texts == ["Crisp", "Loading…", "A logo"]


def test_no_text_people_read_is_written_in_the_client_s_code() -> None:
    """Every text of the client comes from a catalog: a word in its modules (outside static/js/lang/) is a
    text only English speakers, or only Germans, would read. ALLOWED names the few that are not texts."""
    found = [
        f"{path.relative_to(STATIC)}:{line}: {text!r}"
        for path in client_modules()
        for line, text in prose_in_code(path)
        if (path.relative_to(STATIC).as_posix(), text) not in ALLOWED
    ]
    assert found == [], "texts outside the catalogs:\n" + "\n".join(found)
    # The allow-list holds nothing that is gone: each entry is still in its file.
    stale = [key for key in ALLOWED if key[1] not in {t for _, t in prose_in_code(STATIC / key[0])}]
    assert stale == []


def test_index_html_speaks_every_language_or_none() -> None:
    """index.html is drawn before any catalog is loaded: its texts are the game's name and, for a browser
    without JavaScript, the one sentence in each language of the client (each marked with its lang)."""
    page = PageText()
    page.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    noscript = re.search(r"<noscript>(.*?)</noscript>", (STATIC / "index.html").read_text(encoding="utf-8"), re.S)
    assert noscript is not None
    said = dict(re.findall(r'<p lang="(\w+)">([^<]+)</p>', noscript.group(1)))
    assert set(said) == set(languages()), "the no-script sentence in every language"
    rest = [text for text in page.texts if text not in said.values()]
    # The description search engines and link previews show (one, in English: a page has one), the tab's
    # title and the loading line (the game's name).
    assert rest == ["Crisp: the card game of memory and bluff. Play online with friends.", "Crisp", "Crisp…"], rest


def languages() -> dict[str, str]:
    """``LANGUAGES`` of static/js/i18n.js: code -> the language's name in itself."""
    source = (STATIC / "js" / "i18n.js").read_text(encoding="utf-8")
    found = re.search(r"export const LANGUAGES = \{([^}]*)\}", source)
    assert found is not None
    return dict(re.findall(r'(\w+): "([^"]+)"', found.group(1)))


def test_the_picker_s_languages_are_the_catalog_files() -> None:
    """A language in the picker without its catalog would fall back to English; a catalog outside the
    picker could not be chosen."""
    assert set(languages()) == {p.stem for p in CATALOGS.glob("*.js")}
    assert len(set(languages().values())) == len(languages())


def test_the_offline_page_speaks_the_client_s_languages() -> None:
    """The service worker's offline page (static/offline.html) has a section in each language of the picker."""
    page = (STATIC / "offline.html").read_text(encoding="utf-8")
    assert re.findall(r'<section lang="(\w+)">', page) == list(languages())


@pytest.mark.parametrize("path", sorted(CATALOGS.glob("*.js")), ids=lambda p: p.stem)
def test_a_catalog_names_each_key_once(path: Path) -> None:
    """A key given twice in an object literal is silently the later one: one of the two texts is never shown,
    and a fix to the first does nothing."""
    blocks: list[list[str]] = []  # the keys of each object: the catalog, then each nested one (ev: {...})
    stack: list[tuple[list[str], int]] = [([], 2)]  # the open objects and their keys' indent
    for line in path.read_text(encoding="utf-8").splitlines():
        key = re.match(r"^( +)(\w+): ", line)
        if key and len(key.group(1)) == stack[-1][1]:
            stack[-1][0].append(key.group(2))
            if line.rstrip().endswith("{"):
                stack.append(([], stack[-1][1] + 2))
        elif len(stack) > 1 and line.strip() in ("},", "}") and len(line) - len(line.lstrip()) == stack[-1][1] - 2:
            blocks.append(stack.pop()[0])
    blocks.append(stack[0][0])
    assert len(blocks[-1]) > 50, "the catalog's keys were not found"
    twice = [key for block in blocks for key, count in Counter(block).items() if count > 1]
    assert twice == []
