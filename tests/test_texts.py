"""The server's texts (``crisp_server/texts/``): one catalog per language, each with every text English has,
none empty, each filling in the same ``{names}``; one list of languages for the protocol, the catalogs and
the bot command; every code the server sends has its text; and the words reach the player in each language."""

from __future__ import annotations

import ast
import dataclasses
import string
import typing
from pathlib import Path
from typing import Final

import orjson
import pytest

from crisp_server.engine import FULL_DECK, Discard, Game, Options, Rejected
from crisp_server.engine import Code as RuleCode
from crisp_server.texts import CATALOGS, ENGLISH, LANGUAGES, Lang, Texts, preferred, texts
from crisp_server.texts.catalog import Cards, Errors, Hints, Rules, Slots
from crisp_server.wire.protocol import Create, Join, ProtocolCode, Resume, Watch, error_message, unavailable_message

ROOT: Final = Path(__file__).resolve().parents[1] / "crisp_server"


def _texts_of(catalog: Texts) -> dict[str, str]:
    """Every text of ``catalog`` by its path (``errors.bad_message``, ``unavailable``, ``cards.king``)."""
    out: dict[str, str] = {}
    for field in dataclasses.fields(catalog):
        value = getattr(catalog, field.name)
        if isinstance(value, str):
            out[field.name] = value
        else:
            out.update(
                {f"{field.name}.{inner.name}": getattr(value, inner.name) for inner in dataclasses.fields(value)}
            )
    return out


def _names(text: str) -> set[str]:
    """The ``{names}`` a text fills in (``str.format``); a stray brace raises."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_languages_are_the_lang_literal_the_catalogs_and_the_modules() -> None:
    assert LANGUAGES == ("en", "de", "fr", "es", "it", "nl")
    assert typing.get_args(Lang) == LANGUAGES
    assert tuple(CATALOGS) == LANGUAGES
    modules = {p.stem for p in (ROOT / "texts").glob("*.py")} - {"__init__", "catalog"}
    assert modules == set(LANGUAGES), "one module per language, each in the catalogs"
    assert CATALOGS["en"] is ENGLISH
    # The protocol's entry messages take exactly these.
    for model in (Create, Join, Resume, Watch):
        assert typing.get_args(model.model_fields["lang"].annotation) == LANGUAGES, model


def test_the_server_speaks_every_language_of_the_web_client() -> None:
    """The client sends its language in every entry message and ``lang``: one the server lacked would be a
    ``bad_message``."""
    client = {p.stem for p in (ROOT.parent / "static" / "js" / "lang").glob("*.js")}
    assert {"en", "de"} <= client
    assert client <= set(LANGUAGES)


def test_every_code_the_server_sends_has_its_text() -> None:
    assert {f.name for f in dataclasses.fields(Errors)} == {c.value for c in ProtocolCode}
    assert {f.name for f in dataclasses.fields(Rules)} == {c.value for c in RuleCode}
    # Every reason a level gives (``Reason("code", ...)`` in crisp_server/bots/) has its line.
    reasons: set[str] = set()
    for path in (ROOT / "bots").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Reason":
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path.name}: a reason's code is a literal"
                assert isinstance(first.value, str), f"{path.name}: a reason's code is a string"
                reasons.add(first.value)
    assert reasons == {f.name for f in dataclasses.fields(Hints)}
    assert len(dataclasses.fields(Cards)) == 13
    assert [f.name for f in dataclasses.fields(Slots)] == ["left", "middle", "right"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_catalog_has_every_text_of_english_none_empty_with_the_same_names(lang: str) -> None:
    english = _texts_of(ENGLISH)
    mine = _texts_of(CATALOGS[lang])
    assert mine.keys() == english.keys()
    for key, text in mine.items():
        assert isinstance(text, str), key
        assert text, f"{lang} {key}: empty"
        assert text.strip() == text, f"{lang} {key}: blanks around it"
        assert "  " not in text, f"{lang} {key}: two spaces"
        assert _names(text) == _names(english[key]), f"{lang} {key}: {{names}} differ from English's"


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_a_language_has_its_own_words(lang: str) -> None:
    """Only a number (a card ``2`` ... ``10``) may be written as in English: nothing was left untranslated."""
    english = _texts_of(ENGLISH)
    same = [key for key, text in _texts_of(CATALOGS[lang]).items() if text == english[key] and not text.isdigit()]
    assert same == []


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5", "fr"),
        ("NL-be", "nl"),
        ("pt-BR, es;q=0.5, it;q=0.5", "es"),  # of equal weights, the first
        ("en;q=0.1, it;q=0.2", "it"),  # the heavier, wherever it is listed
        ("de;q=0, nl", "nl"),  # q=0: not wanted
        ("xx;q=abc, it;q=2, es;q=0.3", "es"),  # malformed weights are skipped
        ("*", None),
        ("pt, ja", None),
        ("", None),
        (None, None),
    ],
)
def test_the_preferred_language_of_an_accept_language_header(header: str | None, lang: str | None) -> None:
    assert preferred(header) == lang


def test_a_language_the_server_does_not_have_gets_english() -> None:
    assert texts("pt") is ENGLISH
    assert texts("") is ENGLISH
    assert orjson.loads(error_message(3, ProtocolCode.NOT_HOST, "pt"))["message"] == "Only the host can do that."


#: A rule's refusal as a player of each language reads it.
NOT_YOUR_TURN: Final = {
    "en": "It isn't your turn.",
    "de": "Du bist nicht dran.",
    "fr": "Ce n'est pas ton tour.",
    "es": "No es tu turno.",
    "it": "Non è il tuo turno.",
    "nl": "Je bent niet aan de beurt.",
}
UNAVAILABLE: Final = {
    "en": "The server cannot save the game right now. It goes on by itself as soon as it can: stay here.",
    "de": "Der Server kann das Spiel gerade nicht speichern. Es geht von selbst weiter, sobald er kann: bleib hier.",
    "fr": "Le serveur ne peut pas enregistrer la partie pour le moment. Elle reprendra d'elle-même dès que "
    "possible\u00a0: reste ici.",
    "es": "El servidor no puede guardar la partida ahora mismo. Seguirá sola en cuanto pueda: no te vayas.",
    "it": "Il server non riesce a salvare la partita in questo momento. Riprenderà da sola appena possibile: "
    "resta qui.",
    "nl": "De server kan het spel nu niet opslaan. Het gaat vanzelf verder zodra dat kan: blijf hier.",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_rejection_and_the_unavailable_message_in_each_language(lang: str) -> None:
    assert NOT_YOUR_TURN.keys() == UNAVAILABLE.keys() == set(LANGUAGES)
    game = Game(["Ana", "Ben"], Options(), first_dealer=1)
    game.start_round(list(FULL_DECK))
    with pytest.raises(Rejected) as refused:
        game.apply(Discard(1))  # Ana (seat 0) moves first
    error = orjson.loads(error_message(7, refused.value.code, lang))
    assert error == {"type": "error", "v": 7, "code": "not_your_turn", "message": NOT_YOUR_TURN[lang]}
    unavailable = orjson.loads(unavailable_message(7, lang))
    assert unavailable == {"type": "unavailable", "v": 7, "reason": "database", "message": UNAVAILABLE[lang]}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_error_code_has_a_message_in_each_language(lang: str) -> None:
    catalog = CATALOGS[lang]
    for code in [*ProtocolCode, *RuleCode]:
        message = orjson.loads(error_message(1, code, lang))["message"]
        assert message == (catalog.rule(code.value) if isinstance(code, RuleCode) else catalog.error(code.value))
        assert message, code
