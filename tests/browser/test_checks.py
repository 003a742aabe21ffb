"""The page checks themselves (js/*.js) on pages made for them: each finds what it is meant to find."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.harness import fits


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 360, "height": 640})
    yield context.new_page()
    context.close()


def box(overflow: str) -> str:
    """A 300 px box on screen holding a tall list and, at its end, a button below the screen's bottom."""
    return (
        f'<div id="app"><div style="height:300px;overflow-y:{overflow}">'
        '<div style="height:900px">long list</div><button data-key="end">End</button></div></div>'
    )


def test_a_control_below_the_screen_is_off_screen(page: Page) -> None:
    page.set_content('<div id="app"><div style="height:900px"></div><button data-key="end">End</button></div>')
    assert fits(page) == ["off screen: end"]
    assert fits(page, controls=False) == []


def test_a_control_a_scrolling_box_reaches_is_on_screen(page: Page) -> None:
    page.set_content(box("auto"))
    assert fits(page) == []


def test_a_control_a_box_cuts_off_without_scrolling_is_off_screen(page: Page) -> None:
    page.set_content(box("hidden"))
    assert fits(page) == ["off screen: end"]


def test_a_scrolling_box_itself_below_the_screen_hides_its_controls(page: Page) -> None:
    page.set_content('<div style="height:700px"></div>' + box("auto"))
    assert fits(page) == ["off screen: end"]


def test_a_control_pushed_sideways_out_of_a_scrolling_box_is_off_screen(page: Page) -> None:
    page.set_content(
        '<div id="app"><div style="height:300px;width:200px;overflow-y:auto;overflow-x:hidden">'
        '<div style="height:900px">long list</div>'
        '<button data-key="end" style="margin-left:250px">End</button></div></div>'
    )
    assert fits(page) == ["off screen: end"]


def test_sideways_scrolling_is_found(page: Page) -> None:
    page.set_content('<div id="app"><div style="width:500px">wide</div></div>')
    assert fits(page, controls=False) == ["scrolls sideways by 148 px"]  # 500 px and the 8 px body margin
