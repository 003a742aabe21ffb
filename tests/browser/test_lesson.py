"""The tutorial ("Learn to play") in a real browser at 360x640 against the real server: completed in every
language whose catalog exists (``static/js/lang/``) by tapping only what each step points at, in at most 40
taps; wrong taps at every step explained and not sent, the lesson going on; axe clean and fitting the screen at
every step, in both themes; a dropped connection resumed at the same step; the home page and the link page
offering it, and finishing remembered on the device.

The computer players' moves come at once here (``CRISP_BOT_PAUSE=0``): the steps that only watch them pass by
themselves. Screenshots of every step go to ``artifacts/screenshots/lesson-*.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.browser.harness import fits, open_page, sent_messages, watch
from tests.e2e.procs import server_process

LANG = Path(__file__).resolve().parents[2] / "static" / "js" / "lang"
#: Every language the client has a catalog for: each one plays the whole tutorial.
LANGUAGES = sorted(p.stem for p in LANG.glob("*.js"))
MAX_TAPS = 40


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("lesson")
    with server_process(data, {"CRISP_BOT_PAUSE": "0"}, log=data / "server.log") as (url, _proc):
        yield url


def moves(sent: list[str]) -> list[str]:
    """The frames a page sent but its keep-alive pings."""
    return [f for f in sent if '"ping"' not in f]


def where(page: Page) -> tuple[str, str]:
    """The step shown (its progress line) and the place it points at (``""``: none)."""
    progress = page.locator("#lesson-progress").inner_text() if page.locator("#lesson-progress").count() else ""
    target = page.locator(".lesson-target")
    return progress, (target.first.get_attribute("data-key") or "") if target.count() else ""


def at_last_step(page: Page) -> bool:
    return page.locator('[data-key="lesson-practice"]').count() > 0


def next_place(page: Page) -> tuple[str, str]:
    """Wait until the step points at a place to tap (the computer players' steps pass by), or is the last."""
    page.wait_for_function(
        "() => document.querySelector('.lesson-target') || document.querySelector('[data-key=\"lesson-practice\"]')"
    )
    return where(page)


def tap(page: Page) -> None:
    """Tap the place the step points at, and wait until the lesson has taken it (the step or its place
    changed: a Queen's three taps are one step)."""
    before = where(page)
    target = page.locator(".lesson-target").first
    expect(target).to_be_enabled()
    target.click()
    page.wait_for_function(
        """([progress, key]) => {
            const p = document.querySelector('#lesson-progress')?.textContent ?? '';
            const t = document.querySelector('.lesson-target')?.dataset.key ?? '';
            return p !== progress || t !== key;
        }""",
        arg=list(before),
    )


def check_step(page: Page, axe: Axe, name: str) -> None:
    """The step's screen: its prompt said, everything on screen, axe clean; a screenshot."""
    page.wait_for_timeout(600)  # the moves' animations settle, a new move button is armed (400 ms)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    assert page.locator("#lesson-prompt").inner_text().strip(), name
    assert page.locator("#lesson-live").inner_text().strip(), name  # announced to screen readers
    assert fits(page, controls=True) == [], name
    axe_clean(page, axe, name)


def axe_clean(page: Page, axe: Axe, name: str) -> None:
    results = axe.run(page)
    bad = [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]
    found = [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:5]}" for v in bad]
    assert not bad, f"{name}: " + "; ".join(found)


SHOTS = Path()


@pytest.fixture(autouse=True)
def _shots(shots: Path) -> None:
    global SHOTS  # noqa: PLW0603 (the module's helpers save where the session's fixture says)
    SHOTS = shots


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_whole_tutorial_by_tapping_only_where_it_points(browser: Browser, base: str, lang: str) -> None:
    dark = LANGUAGES.index(lang) % 2 == 1
    context, page = open_page(browser, 360, 640, lang, dark=dark)
    errors: list[str] = []
    watch(page, errors)
    axe = Axe()
    try:
        page.goto(base)
        expect(page.locator('[data-key="learn"]')).to_be_visible()
        page.screenshot(path=str(SHOTS / f"lesson-{lang}-home.png"))
        axe_clean(page, axe, "home")
        page.locator('[data-key="learn"]').click()
        taps = 1
        step = 0
        while not at_last_step(page):
            next_place(page)
            if at_last_step(page):
                break
            check_step(page, axe, f"lesson-{lang}-{'dark' if dark else 'light'}-{step:02d}")
            tap(page)
            taps += 1
            step += 1
            assert taps <= MAX_TAPS, f"{lang}: more than {MAX_TAPS} taps"
        check_step(page, axe, f"lesson-{lang}-{'dark' if dark else 'light'}-last")
        assert page.evaluate("document.documentElement.lang") == lang
        page.locator('[data-key="lesson-home"]').click()
        taps += 1
        expect(page.locator(".screen.home")).to_be_visible()
        assert taps <= MAX_TAPS
        # Finished on this device: the home page says so, and no longer offers it first.
        assert page.evaluate("localStorage.getItem('crisp.lessonDone')") == "1"
        expect(page.locator(".learn.done")).to_be_visible()
        assert errors == []
    finally:
        context.close()


def test_a_wrong_tap_at_every_step_is_explained_and_not_sent(browser: Browser, base: str) -> None:
    context, page = open_page(browser, 360, 640, "en-GB")
    errors: list[str] = []
    watch(page, errors)
    sent = sent_messages(page)
    try:
        page.goto(f"{base}/learn")
        explained = 0
        while True:
            progress, key = next_place(page)
            if at_last_step(page):
                break
            # Somewhere else on the table: another player's card, or the results' title at the round's end.
            wrong = page.locator(".opponents .mini-card:not(.lesson-target)").first
            if page.locator(".overlay.results").count():
                wrong = page.locator("#results-title")
            count = len(moves(sent))
            wrong.click()
            expect(page.locator(".lesson-wrong")).to_be_visible()
            assert page.locator(".lesson-wrong").inner_text().strip()
            assert len(moves(sent)) == count, f"{progress}: a wrong tap was sent: {moves(sent)[count:]}"
            assert where(page) == (progress, key)  # the lesson waits where it was
            explained += 1
            tap(page)
        assert explained >= 20
        assert errors == []
    finally:
        context.close()


def test_a_wrong_move_button_is_not_sent_and_back_rereads(browser: Browser, base: str) -> None:
    context, page = open_page(browser, 360, 640, "en-GB", dark=True)
    errors: list[str] = []
    watch(page, errors)
    sent = sent_messages(page)
    try:
        page.goto(f"{base}/learn")
        while where(page)[1] != "slot-left":  # "keep": the 2 drawn, to be kept on the left
            next_place(page)
            tap(page)
        # The ring holds still where the phone asks for reduced motion.
        ring = page.locator(".lesson-target").first
        assert ring.evaluate("e => getComputedStyle(e).animationName") == "lesson-ring"
        page.emulate_media(reduced_motion="reduce")
        assert ring.evaluate("e => getComputedStyle(e).animationName") == "none"
        count = len(moves(sent))
        page.locator('[data-key="act-discard"]').click()  # legal, but not the lesson's move
        expect(page.locator(".lesson-wrong")).to_be_visible()
        assert len(moves(sent)) == count
        # A control that cannot be used now (the draw pile, once drawn) is explained too.
        page.locator('[data-key="lesson-back"]').click()
        page.locator('[data-key="lesson-next"]').click()
        expect(page.locator(".lesson-wrong")).to_have_count(0)
        pile = page.locator('[data-key="draw-pile"]')
        expect(pile).to_be_disabled()
        box = pile.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(page.locator(".lesson-wrong")).to_be_visible()
        assert len(moves(sent)) == count + 2  # Back and Next only
        # Back: the welcome again, the game waiting; Next comes back to the move.
        page.locator('[data-key="lesson-back"]').click()
        expect(page.locator(".lesson-note")).to_be_visible()
        page.screenshot(path=str(SHOTS / "lesson-back.png"))
        page.locator('[data-key="lesson-next"]').click()
        expect(page.locator('[data-key="slot-left"].lesson-target')).to_be_visible()
        # Skip the tutorial: asked first, then home; its room is not offered back, nor marked finished.
        page.locator('[data-key="lesson-skip"]').click()
        page.locator('[data-key="confirm-ok"]').click()
        expect(page.locator(".screen.home")).to_be_visible()
        expect(page.locator(".your-rooms")).to_have_count(0)
        assert page.evaluate("localStorage.getItem('crisp.lessonDone')") is None
        expect(page.locator('[data-key="learn"]')).to_be_visible()
        assert errors == []
    finally:
        context.close()


def test_a_dropped_connection_resumes_the_tutorial_at_its_step(browser: Browser, base: str) -> None:
    context, page = open_page(browser, 360, 640, "de")
    errors: list[str] = []
    watch(page, errors)
    try:
        page.goto(f"{base}/learn")
        for _ in range(4):
            next_place(page)
            tap(page)
        before = next_place(page)
        context.set_offline(True)
        page.wait_for_timeout(500)
        context.set_offline(False)
        page.reload()  # a reload too: the page comes back to its seat, at the same step
        expect(page.locator(".lesson-panel")).to_be_visible()
        assert next_place(page) == before
        tap(page)
        assert errors == []
    finally:
        context.close()


def test_the_link_page_offers_the_tutorial_and_its_end_offers_the_room(browser: Browser, base: str) -> None:
    context, page = open_page(browser, 360, 640, "en-GB")
    guest, other = open_page(browser, 360, 640, "en-GB", dark=True)  # another phone (its own storage)
    try:
        page.goto(base)
        page.fill("#name", "Host")
        page.locator('[data-key="create"]').click()
        expect(page.locator(".lobby")).to_be_visible()
        # The host, waiting in the lobby, is offered the tutorial in a new tab.
        expect(page.locator('[data-key="learn-waiting"][target="_blank"]')).to_be_visible()
        code = page.locator(".lobby .code-badge").first.inner_text().strip()
        other.goto(f"{base}/r/{code}")
        other.screenshot(path=str(SHOTS / "lesson-link-page.png"))
        other.locator('[data-key="learn-first"]').click()
        while not at_last_step(other):
            next_place(other)
            if at_last_step(other):
                break
            tap(other)
        join = other.locator('[data-key="lesson-join"]')
        expect(join).to_contain_text(code)
        join.click()
        expect(other.locator('[data-key="join"]')).to_be_visible()
        assert other.url.endswith(f"/r/{code}")
    finally:
        context.close()
        guest.close()
