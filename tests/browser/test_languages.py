"""The client's languages in a browser: each catalog whole (English's keys, every text there, every function
giving a text), the language chosen from the browser's preferred ones until the player picks one, and the
picker (each language named in itself, its name heard, the choice redrawn at once and remembered), on the
home screen and, in short, on the table's bar, at 360x640 light and dark.

A language of LANGUAGES whose catalog is not in static/js/lang/ yet is skipped here (test_client_texts.py
fails on it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, FloatRect, Page, expect

from tests.browser.harness import LANGUAGES as PRESENT
from tests.browser.harness import Bots, join, open_page, page_check
from tests.e2e.procs import server_process
from tests.test_client_texts import languages

CATALOG = page_check("catalog")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("server")
    with server_process(data, log=data / "server.log") as (url, _proc):
        yield url


def catalog_problems(page: Page, code: str) -> list[str]:
    return list(page.evaluate(CATALOG, code))


@pytest.mark.parametrize("code", PRESENT)
def test_every_catalog_is_whole(browser: Browser, base: str, code: str) -> None:
    context, page = open_page(browser, 360, 640)
    try:
        page.goto(base)
        problems = catalog_problems(page, code)
        assert problems == [], "\n".join(problems)
    finally:
        context.close()


#: de.js as a careless edit would leave it: a key gone, a text emptied, a value forgotten, a section cut.
BROKEN = """
const broken = { ...de, ev: { ...de.ev }, rules: { ...de.rules, sections: de.rules.sections.slice(1) } };
delete broken.tagline;
broken.copied = "";
broken.roomTitle = () => "Raum";
broken.waitTime = () => "";
broken.ev.pileTurned = "TODO";
export default broken;
"""


def test_a_catalog_that_lacks_a_key_fails(browser: Browser, base: str) -> None:
    """The check above finds each fault of a broken catalog (so a catalog that passes it lacks none)."""
    context = browser.new_context(service_workers="block")  # the worker's cache would answer before the route
    page = context.new_page()
    try:
        page.goto(base)
        german = page.evaluate("async () => (await fetch('/js/lang/de.js')).text()")
        body = german.replace("export default {", "const de = {", 1) + BROKEN
        page.route("**/js/lang/de.*", lambda route: route.fulfill(body=body, content_type="text/javascript"))
        page.goto(base)
        problems = catalog_problems(page, "de")
        expected = [
            "de.tagline: missing",
            "de.copied: empty",
            "de.roomTitle: takes 0 values, English's 1",
            "de.ev.pileTurned: a placeholder",
            "de.rules.sections: 7 items, English's 8",
        ]
        for fault in expected:
            assert [p for p in problems if p.startswith(fault)], (fault, problems)
        assert [p for p in problems if p.startswith("de.waitTime(") and p.endswith(": empty")]
    finally:
        context.close()


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        ("fr-FR", "fr"),
        ("fr-CA", "fr"),
        ("es-ES", "es"),
        ("it-IT", "it"),
        ("nl-BE", "nl"),
        ("de-AT", "de"),
        ("pt-BR", "en"),
    ],
)
def test_the_language_follows_the_browser(browser: Browser, base: str, locale: str, lang: str) -> None:
    """Until the player picks one, the page speaks the browser's language, whatever its region; English where
    the client does not speak it."""
    if lang not in PRESENT:
        pytest.skip(f"no catalog static/js/lang/{lang}.js yet")
    context, page = open_page(browser, 360, 640, locale=locale)
    try:
        page.goto(base)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        tagline = page.evaluate(f"async () => (await import('/js/lang/{lang}.js')).default.tagline")
        expect(page.locator(".tagline")).to_have_text(tagline)
        expect(page.locator('[data-key="lang"]')).to_have_value(lang)
        expect(page.locator(".lang-shown")).to_have_text(lang.upper())
    finally:
        context.close()


def test_the_first_preferred_language_the_client_speaks_wins(browser: Browser, base: str) -> None:
    context, page = open_page(browser, 360, 640)
    try:
        prefs = ["pt-BR", "ja", "de-CH", "en-GB"]
        page.add_init_script(f"Object.defineProperty(navigator, 'languages', {{ get: () => {prefs!r} }})")
        page.goto(base)
        expect(page.locator("html")).to_have_attribute("lang", "de")
        # The player's choice, once made, wins over the browser's.
        page.evaluate("localStorage.setItem('crisp.lang', 'en')")
        page.reload()
        expect(page.locator("html")).to_have_attribute("lang", "en")
    finally:
        context.close()


#: The page's connection lost, as its state says it while it reconnects (the socket itself stays).
OFFLINE = """async () => {
  const { app, actions } = await import("/js/state.js");
  app.status = "reconnecting";
  actions.render();
}"""


def pick(page: Page, lang: str) -> None:
    """Pick ``lang`` as a finger does: the list has the focus, then the choice."""
    page.locator('[data-key="lang"]').focus()
    page.locator('[data-key="lang"]').select_option(lang)
    expect(page.locator("html")).to_have_attribute("lang", lang)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_picker_names_each_language_in_itself(browser: Browser, base: str, shots: Path, theme: str) -> None:
    """Home at 360x640: the current language's code on the top row, by a globe; its list holds every language
    of the client, each in itself and marked with its lang; a pick draws the screen again in it (focus kept) and is
    remembered; screen readers hear "Language" and the current one. The rules' bar names it; the table's bar
    shows its code."""
    context, page = open_page(browser, 360, 640, locale="en-GB", dark=theme == "dark")
    bots: Bots | None = None
    try:
        page.goto(base)
        picker = page.locator('[data-key="lang"]')
        expect(picker).to_have_accessible_name("Language")
        expect(picker).to_have_value("en")
        options = picker.locator("option")
        assert options.evaluate_all("(os) => os.map((o) => [o.value, o.lang, o.textContent])") == [
            [code, code, name] for code, name in languages().items()
        ]
        page.screenshot(path=str(shots / f"picker-home-en-{theme}-360x640.png"), clip=TOP)
        page.fill("#name", "Maximilian")  # a field's text survives the redraw
        other = next(code for code in PRESENT if code not in ("en", "de")) if len(PRESENT) > 2 else "de"
        for lang in ("de", other):
            pick(page, lang)
            names = page.evaluate(f"async () => (await import('/js/lang/{lang}.js')).default")
            expect(page.locator(".tagline")).to_have_text(names["tagline"])
            expect(picker).to_have_accessible_name(names["languagePicker"])
            expect(picker).to_be_focused()
            expect(page.locator(".lang-shown")).to_have_text(lang.upper())
            expect(page.locator("#name")).to_have_value("Maximilian")
            assert page.evaluate("localStorage.getItem('crisp.lang')") == lang
        page.screenshot(path=str(shots / f"picker-home-{other}-{theme}-360x640.png"), clip=TOP)
        problems = [v for v in Axe().run(page).response["violations"] if v.get("impact") in ("serious", "critical")]
        assert problems == [], problems
        page.reload()
        expect(page.locator("html")).to_have_attribute("lang", other)
        # The rules' bar has room for the language's name.
        page.locator('[data-key="rules"]').click()
        expect(page.locator(".rules .lang-shown")).to_have_text(languages()[other])
        page.screenshot(path=str(shots / f"picker-rules-{other}-{theme}-360x640.png"), clip=TOP)
        page.locator('[data-key="back"]').click()

        # The table's bar: the code, and the same list.
        bots = Bots(base, ["Ana"])
        join(page, base, bots.code, "Maximilian")
        bots.run(bots.start_and_ready())
        page.locator('[data-key="ready"]').click()
        expect(page.locator(".phase-play")).to_be_visible()
        expect(page.locator(".bar .lang-shown")).to_have_text(other.upper())
        page.screenshot(path=str(shots / f"picker-table-{other}-{theme}-360x640.png"), clip=TOP)
        assert page.locator(".table .bar").evaluate(page_check("one_line")) == [], "the bar on one line"
        # While the connection is away the controls that talk to the server wait; the language does not.
        page.evaluate(OFFLINE)
        expect(page.locator('.bar [data-key="leave"]')).to_be_disabled()
        pick(page, "en")
        expect(page.locator(".bar .lang-shown")).to_have_text("EN")
        page.evaluate(OFFLINE.replace('"reconnecting"', '"online"'))
        expect(page.locator('.bar [data-key="leave"]')).to_have_text("Leave")
    finally:
        context.close()
        if bots is not None:
            bots.close()


#: The top of a 360 px screen, where the links are.
TOP: FloatRect = {"x": 0, "y": 0, "width": 360, "height": 120}
