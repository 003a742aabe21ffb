"""Every text the server sends to players, one catalog per language (``en.py``, ``de.py``, ...).

The errors of the protocol and of the rules, the ``unavailable`` message and the hints' lines go out in the
connection's ``lang`` (``docs/protocol.md``); a language the server does not have gets English. The shape of
a catalog is :class:`~crisp_server.texts.catalog.Texts`. This part imports nothing of the package: the
texts are keyed by the codes they stand for.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from . import de, en, es, fr, it, nl
from .catalog import Cards, Errors, Hints, Rules, Slots, Texts

#: A language of the server's texts: the values of ``lang`` in the protocol and of the bot's ``--lang``.
Lang = Literal["en", "de", "fr", "es", "it", "nl"]
LANGUAGES: Final[tuple[Lang, ...]] = get_args(Lang)

#: Each language's catalog.
CATALOGS: Final[dict[str, Texts]] = {
    "en": en.TEXTS,
    "de": de.TEXTS,
    "fr": fr.TEXTS,
    "es": es.TEXTS,
    "it": it.TEXTS,
    "nl": nl.TEXTS,
}
ENGLISH: Final = en.TEXTS


def texts(lang: str) -> Texts:
    """The catalog of ``lang``; English for a language the server does not have."""
    return CATALOGS.get(lang, ENGLISH)


def preferred(accept_language: str | None) -> Lang | None:
    """The language of :data:`LANGUAGES` an HTTP ``Accept-Language`` header likes best (``fr-CH, de;q=0.8``:
    ``fr``), or ``None`` if it names none of them; a range's region is not looked at, ``*`` is passed over,
    a malformed part is skipped, and of equal weights the first listed wins."""
    best: tuple[float, Lang] | None = None
    for part in (accept_language or "").split(","):
        tag, _, params = part.partition(";")
        primary = tag.strip().split("-")[0].lower()
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = -1.0
        if not 0 < weight <= 1:
            continue
        for lang in LANGUAGES:
            if lang == primary and (best is None or weight > best[0]):
                best = (weight, lang)
    return None if best is None else best[1]


__all__ = [
    "CATALOGS",
    "ENGLISH",
    "LANGUAGES",
    "Cards",
    "Errors",
    "Hints",
    "Lang",
    "Rules",
    "Slots",
    "Texts",
    "preferred",
    "texts",
]
