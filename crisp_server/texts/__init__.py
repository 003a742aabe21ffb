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


__all__ = ["CATALOGS", "ENGLISH", "LANGUAGES", "Cards", "Errors", "Hints", "Lang", "Rules", "Slots", "Texts", "texts"]
