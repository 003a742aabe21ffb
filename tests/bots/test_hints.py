"""Hints: the hard level's move for a seat's own knowledge, with its reason in each language of the server."""

from __future__ import annotations

from collections.abc import Sequence

from crisp_server.bots import Memory, hint
from crisp_server.engine import Discard, Draw, Event, Game, Options, Source, Swap, event_to_dict, visible_to
from crisp_server.engine.cards import FULL_DECK, Slot
from crisp_server.engine.views import private_view, table_view


def _deck(seat0: Sequence[str], seat1: Sequence[str], top: str) -> list[str]:
    """A deck dealing ``seat0`` and ``seat1`` (left, middle, right) with seat 1 dealing, ``top`` drawn first."""
    first = [seat0[0], seat1[0], seat0[1], seat1[1], seat0[2], seat1[2], top]
    return first + [c for c in FULL_DECK if c not in first]


class Seat:
    """Seat 0 of a two-player game, its memory fed exactly what the seat is sent."""

    def __init__(self, deck: list[str], options: Options | None = None) -> None:
        self.game = Game(["Ana", "Ben"], options or Options(), first_dealer=1)
        self.memory = Memory()
        self.feed(self.game.start_round(deck))

    def feed(self, events: Sequence[Event]) -> None:
        self.memory.observe(
            {
                "table": table_view(self.game),
                "you": private_view(self.game, 0),
                "events": [event_to_dict(e) for e in events if visible_to(e, 0)],
            }
        )


def test_swap_an_unknown_middle_card_for_a_low_one() -> None:
    seat = Seat(_deck(["AS", "9H", "2S"], ["5D", "6D", "7D"], "4C"))
    first = hint(seat.memory)
    assert first is not None
    assert first.message == {"type": "draw", "from": "deck"}
    assert first.text("en") == "Draw a card from the draw pile."
    assert first.text("de") == "Zieh eine Karte vom Nachziehstapel."
    seat.feed(seat.game.apply(Draw(0)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "swap", "slot": "middle"}
    assert h.text("en") == "Swap: your middle card is probably higher than 4."
    assert h.text("de") == "Tausche: deine mittlere Karte ist wahrscheinlich höher als 4."
    assert h.text("fr") == "Échange\u00a0: ta carte du milieu vaut sans doute plus que le 4."
    assert h.text("es") == "Cámbiala: tu carta del centro seguramente vale más que el 4."
    assert h.text("it") == "Scambia: il 4 probabilmente vale meno della tua carta centrale."
    assert h.text("nl") == "Ruil: je middelste kaart is waarschijnlijk hoger dan de 4."
    assert h.text("pt") == h.text("en")  # a language the server does not have


def test_swap_a_known_high_card() -> None:
    seat = Seat(_deck(["KS", "9H", "AS"], ["5D", "6D", "7D"], "3C"))
    seat.feed(seat.game.apply(Draw(0)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "swap", "slot": "left"}
    assert h.text("en") == "Swap: your left card is the king, higher than 3."
    assert h.text("de") == "Tausche: deine linke Karte ist König, höher als 3."
    assert h.text("fr") == "Échange\u00a0: ta carte de gauche est le roi, qui vaut plus que le 3."
    assert h.text("es") == "Cámbiala: tu carta de la izquierda es el rey, que vale más que el 3."
    assert h.text("it") == "Scambia: la tua carta di sinistra è il re, e il 3 vale meno."
    assert h.text("nl") == "Ruil: je linkerkaart is de heer, hoger dan de 3."


def test_discard_what_would_not_help_and_look_with_a_jack() -> None:
    seat = Seat(_deck(["AS", "2H", "2S"], ["5D", "6D", "7D"], "9C"))
    seat.feed(seat.game.apply(Draw(0)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "discard"}
    assert h.text("en") == "Discard: the 9 would not lower your sum."
    assert h.text("de") == "Leg sie ab: 9 würde deine Summe nicht senken."
    jack = Seat(_deck(["AS", "2H", "2S"], ["5D", "6D", "7D"], "JC"))
    jack.feed(jack.game.apply(Draw(0)))
    h = hint(jack.memory)
    assert h is not None
    assert h.message == {"type": "jack"}
    assert "middle card" in h.text("en")
    assert "mittlere Karte" in h.text("de")


def test_take_a_low_card_from_the_discard_pile_or_leave_a_high_one() -> None:
    options = Options(discard_draw=True)
    seat = Seat(_deck(["AS", "9H", "KS"], ["5D", "6D", "7D"], "QC"), options)
    seat.feed(seat.game.apply(Draw(0)))
    seat.feed(seat.game.apply(Discard(0)))  # Ana throws the Queen away
    seat.feed(seat.game.advance(3000))
    seat.feed(seat.game.apply(Draw(1)))
    seat.feed(seat.game.apply(Swap(1, Slot.LEFT)))  # Ben's 5 comes out on top of the discard pile
    seat.feed(seat.game.advance(10_000))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "draw", "from": "discard"}
    assert h.text("en") == "Take the 5 from the discard pile for your right card, the king."
    assert h.text("de") == "Nimm 5 vom Ablagestapel für deine rechte Karte, König."
    assert h.text("fr") == "Prends le 5 dans la défausse à la place de ta carte de droite, le roi."
    assert h.text("es") == "Toma el 5 de la pila de descartes a cambio de tu carta de la derecha, el rey."
    assert h.text("it") == "Prendi il 5 dalla pila degli scarti al posto della tua carta di destra, cioè il re."
    assert h.text("nl") == "Pak de 5 van de aflegstapel in ruil voor je rechterkaart, de heer."
    seat.feed(seat.game.apply(Draw(0, Source.DISCARD)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "swap", "slot": "right"}
    assert h.text("en") == "Swap it for your right card: a card from the discard pile must be kept."
    assert h.text("de") == "Tausche sie gegen deine rechte Karte: eine Karte vom Ablagestapel musst du behalten."


def test_take_a_low_card_for_an_unknown_middle() -> None:
    seat = Seat(_deck(["AS", "9H", "2S"], ["5D", "6D", "7D"], "QC"), Options(discard_draw=True))
    seat.feed(seat.game.apply(Draw(0)))
    seat.feed(seat.game.apply(Discard(0)))
    seat.feed(seat.game.advance(3000))
    seat.feed(seat.game.apply(Draw(1)))
    seat.feed(seat.game.apply(Swap(1, Slot.LEFT)))
    seat.feed(seat.game.advance(10_000))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "draw", "from": "discard"}
    assert h.text("en") == "Take the 5 from the discard pile for your middle card (probably about 7)."
    assert h.text("de") == "Nimm 5 vom Ablagestapel für deine mittlere Karte (wahrscheinlich etwa 7)."


def test_queen_gives_a_known_high_card_away() -> None:
    seat = Seat(_deck(["KS", "AH", "2S"], ["5D", "6D", "7D"], "QC"))
    seat.feed(seat.game.apply(Draw(0)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message is not None
    assert h.message["type"] == "queen"
    assert h.message["slot"] == "left"
    assert h.message["target"] == 1
    assert h.text("en").startswith("Queen: give your left card for Ben's")
    assert h.text("de").startswith("Dame: gib deine linke Karte gegen Bens")
    assert h.text("fr").startswith("Dame\u00a0: donne ta carte de gauche contre la carte ")
    assert " de Ben (elle vaut sans doute environ " in h.text("fr")
    assert h.text("es").startswith("Reina: da tu carta de la izquierda a cambio de la carta ")
    assert h.text("it").startswith("Donna: cedi la tua carta di sinistra in cambio della carta ")
    assert h.text("nl").startswith("Vrouw: geef je linkerkaart in ruil voor de ")
    assert " van Ben (waarschijnlijk ongeveer " in h.text("nl")


def test_crisp_with_a_low_hand_and_none_when_it_is_not_your_move() -> None:
    seat = Seat(_deck(["AS", "2H", "AH"], ["TD", "KD", "QD"], "2C"))
    seat.feed(seat.game.apply(Draw(0)))
    seat.feed(seat.game.apply(Swap(0, Slot.MIDDLE)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "crisp"}
    assert h.text("en").startswith("Call Crisp: your sum is about 4, likely the lowest (")
    assert h.text("de").startswith("Ruf Crisp: deine Summe ist etwa 4, wahrscheinlich die niedrigste (")
    seat.feed(seat.game.advance(3000))  # the window closes: it is Ben's move, nothing to suggest
    assert hint(seat.memory) is None


def test_no_crisp_with_a_high_hand() -> None:
    seat = Seat(_deck(["9S", "2H", "9H"], ["AD", "2D", "AC"], "8C"))
    seat.feed(seat.game.apply(Draw(0)))
    seat.feed(seat.game.apply(Swap(0, Slot.LEFT)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message is None
    assert h.text("en").startswith("Do not call Crisp yet: your sum is about")
    assert h.text("de").startswith("Ruf noch nicht Crisp: deine Summe ist etwa")


def test_the_jack_and_the_crisp_call_in_each_language() -> None:
    jack = Seat(_deck(["AS", "2H", "2S"], ["5D", "6D", "7D"], "JC"))
    jack.feed(jack.game.apply(Draw(0)))
    h = hint(jack.memory)
    assert h is not None
    assert [h.text(lang) for lang in ("fr", "es", "it", "nl")] == [
        "Valet\u00a0: regarde ta carte du milieu, tu ne la connais pas encore.",
        "Jota: mira tu carta del centro, todavía no la conoces.",
        "Fante: guarda la tua carta centrale, non la conosci ancora.",
        "Boer: bekijk je middelste kaart, die ken je nog niet.",
    ]
    seat = Seat(_deck(["AS", "2H", "AH"], ["TD", "KD", "QD"], "2C"))
    seat.feed(seat.game.apply(Draw(0)))
    seat.feed(seat.game.apply(Swap(0, Slot.MIDDLE)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "crisp"}
    chance = h.text("en").rpartition("(")[2].removesuffix(" %).")
    assert chance.isdigit()
    assert h.text("fr") == f"Annonce Crisp\u00a0: ton total est d'environ 4, sans doute le plus bas ({chance}\u00a0%)."
    assert h.text("es") == f"Canta Crisp: tu suma es de unos 4, seguramente la más baja ({chance} %)."
    assert h.text("it") == f"Chiama Crisp: il tuo totale è circa 4, probabilmente il più basso ({chance}%)."
    assert h.text("nl") == f"Roep Crisp: je totaal is ongeveer 4, waarschijnlijk het laagste ({chance}%)."


def test_every_card_is_named_with_its_article() -> None:
    """The ranks as the sentences need them: French and Italian elide before a vowel (``l'as``, ``l'8``)."""
    seat = Seat(_deck(["KS", "9H", "AS"], ["5D", "6D", "7D"], "8C"))
    seat.feed(seat.game.apply(Draw(0)))
    h = hint(seat.memory)
    assert h is not None
    assert h.message == {"type": "swap", "slot": "left"}
    assert h.text("it") == "Scambia: la tua carta di sinistra è il re, e l'8 vale meno."
    assert h.text("fr") == "Échange\u00a0: ta carte de gauche est le roi, qui vaut plus que le 8."
