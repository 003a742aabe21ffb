"""Render static/icons/icon.svg to the PNG sizes the web app manifest lists, with the system Chromium.

python scripts/render_icons.py
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parent.parent / "static" / "icons"


def main() -> None:
    svg = (ICONS / "icon.svg").read_text()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for size in (192, 512):
            page = browser.new_page(viewport={"width": size, "height": size})
            scaled = svg.replace("<svg ", '<svg width="100%" height="100%" ', 1)
            page.set_content(
                "<html><body style='margin:0;background:transparent'>"
                f"<div style='width:{size}px;height:{size}px'>{scaled}</div></body></html>"
            )
            page.screenshot(path=str(ICONS / f"icon-{size}.png"), omit_background=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
