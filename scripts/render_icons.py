"""Render static/icons/icon.svg to the PNG sizes the web app manifest lists, with the system Chromium: the
icons as drawn (``purpose: any``) and the maskable ones (``purpose: maskable``), whose background fills
the whole square and whose artwork fits inside the safe zone, the centred circle of 80% of the width, that
every launcher's mask (circle, squircle, rounded square) keeps.

python scripts/render_icons.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parent.parent / "static" / "icons"
SIZES: Final = (192, 512)
#: The rounded card-table square behind the cards in icon.svg.
BACKGROUND: Final = '<rect width="512" height="512" rx="96" fill="#0f5132"/>'
#: The cards reach 212 units from the centre (a corner of the right card, with its stroke); the safe zone's
#: radius is 204.8 (40% of 512). Scaled by 0.85 they reach 180, leaving a margin inside the circle.
MASKABLE_SCALE: Final = 0.85


def maskable(svg: str) -> str:
    """icon.svg with its background square full-bleed (no rounded corners) and its artwork scaled about the
    centre into the safe zone."""
    if BACKGROUND not in svg:
        raise SystemExit(f"icon.svg no longer starts with {BACKGROUND}: update render_icons.py")
    head, art = svg.split(BACKGROUND, 1)
    art, _, tail = art.rpartition("</svg>")
    scale = f"translate(256 256) scale({MASKABLE_SCALE}) translate(-256 -256)"
    full_bleed = BACKGROUND.replace(' rx="96"', "")
    return f'{head}{full_bleed}\n  <g transform="{scale}">{art}</g>\n</svg>{tail}'


def main() -> None:
    svg = (ICONS / "icon.svg").read_text()
    drawings = {"icon-{size}.png": svg, "icon-maskable-{size}.png": maskable(svg)}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for name, drawing in drawings.items():
            for size in SIZES:
                page = browser.new_page(viewport={"width": size, "height": size})
                scaled = drawing.replace("<svg ", '<svg width="100%" height="100%" ', 1)
                page.set_content(
                    "<html><body style='margin:0;background:transparent'>"
                    f"<div style='width:{size}px;height:{size}px'>{scaled}</div></body></html>"
                )
                page.screenshot(path=str(ICONS / name.format(size=size)), omit_background=True)
                page.close()
        browser.close()


if __name__ == "__main__":
    main()
