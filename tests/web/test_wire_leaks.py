"""No message tells anyone a card they may not know: random games of 2 to 8 bots and a spectator.

Every message every seat and every spectator received is checked, in order, against what that recipient
has legitimately seen so far (docs/rules.md, "Not in the rules"): the cards shown to it alone (``card_shown``,
``you.drawn_card`` for the drawer), the public discards (the discard pile, swaps, discards, Jacks, Queens,
Kings, time-outs), and at a round's end every hand and the deck. A card code anywhere else is a leak.
Fields that repeat a public card (taken from the discard pile) must name one already seen.

The server's own state at each version (seen through ``rooms/taps.py``) adds ground truth: no face-down card
(in a hand, or drawn from the draw pile, and never public this round) appears in any message except in its
one-time private reveal, and never in the shared table view.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pytest

from crisp_server.engine import Game, Source
from crisp_server.engine.views import table_view
from crisp_server.rooms import publishing as room_module
from crisp_server.rooms import taps
from crisp_server.rooms.phase import Phase
from crisp_server.rooms.room import Room
from tests.web.audit import audit
from tests.web.bots import OPEN_LIMITS, Bots, Style, card_codes, rig
from tests.web.harness import Harness, running_server

Message = dict[str, Any]
#: Events whose card fields put a card face up onto the discard pile, for everyone to see.
PUBLIC_DISCARDS: Final = {
    "swapped": "discarded",
    "discarded": "card",
    "jack_used": "card",
    "queen_used": "card",
    "king_used": "card",
    "timed_out": "discarded",
}


@pytest.fixture
async def wire() -> AsyncIterator[Harness]:
    async with running_server(**OPEN_LIMITS) as harness:
        yield harness


# -- ground truth ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    """The server's state when it published a version."""

    hidden: frozenset[str]
    """Cards face down (in a hand, or drawn from the draw pile) that were never public this round."""
    drawn: str | None
    """The card drawn from the draw pile, while it is held."""


@dataclass
class Spy:
    """Keeps the truth of every version of every room, as each is published."""

    truth: dict[tuple[str, int], Truth] = field(default_factory=dict)
    public: dict[str, set[str]] = field(default_factory=dict)  # per round (its commitment): cards seen face up

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # An observer of every published version (``rooms/taps.py``): compiled rooms call it too.
        monkeypatch.setattr(taps, "PUBLISHED", [self.record])

    def record(self, room: Room) -> None:
        game = room.game
        r = game.round if game is not None else None
        if r is None or r.ended or room.phase not in (Phase.PEEK, Phase.PLAY):
            self.truth[room.code, room.v] = Truth(frozenset(), None)
            return
        public = self.public.setdefault(room.fair[-1].commitment, set())
        public.update(r.discard)
        from_deck = r.drawn_from is Source.DECK
        if r.drawn is not None and not from_deck:
            public.add(r.drawn)
        down = {card for hand in r.hands for card in hand}
        if r.drawn is not None and from_deck:
            down.add(r.drawn)
        self.truth[room.code, room.v] = Truth(frozenset(down - public), r.drawn if from_deck else None)

    def at(self, code: str, v: int) -> Truth:
        return self.truth[code, v]


# -- what a recipient may know ---------------------------------------------------------------------------


@dataclass
class Recipient:
    """One seat (``None``: a spectator) and what it has legitimately seen of the current round."""

    seat: int | None
    known: set[str] = field(default_factory=set)
    round_key: str | None = None
    checked: int = 0


def check_message(who: Recipient, m: Message, truth: Truth) -> None:
    codes = card_codes(m)
    seat = who.seat
    fair = m["room"]["fair"]
    key = fair["commitment"] if fair is not None else None
    if key != who.round_key:  # a new deal: the codes are in new places
        who.round_key, who.known = key, set()
    table = m["table"]
    r = table["round"] if table is not None else None
    ended = r is not None and r["ended"]
    you = m["you"]
    what = f"{'spectator' if seat is None else f'seat {seat}'}, v{m['v']}"

    # Private disclosures: to this seat alone.
    private: set[str] = set()
    for e in m["events"]:
        if e["type"] == "card_shown":
            assert seat is not None, f"{what}: a spectator was sent {e}"
            assert e["seat"] == seat, f"{what}: sent another seat's {e}"
            private.add(e["card"])
    drawer = seat is not None and r is not None and not ended and r["turn"] == seat
    from_deck = r is not None and r["drawn"] is not None and r["drawn"]["from"] == "deck"
    if you["drawn_card"] is not None:
        assert drawer, f"{what}: drawn_card {you['drawn_card']} for someone who is not drawing"
        assert from_deck, f"{what}: drawn_card for a card from the discard pile"
        private.add(you["drawn_card"])
    assert you["drawn_card"] == (truth.drawn if drawer and from_deck else None), f"{what}: {you}"
    if seat is None:
        assert you["can"] == [], f"{what}: a spectator may do {you['can']}"

    # Public disclosures.
    public: set[str] = set()
    if r is not None:
        public.update(r["discard"])
        if r["drawn"] is not None and r["drawn"]["from"] == "deck":
            assert r["drawn"]["card"] is None, f"{what}: the table shows a card drawn from the draw pile"
        assert (r["hands"] is not None) == ended, f"{what}: hands {r['hands']} while the round runs"
        assert (r["sums"] is not None) == ended
        if ended:
            public.update(card_codes(r["hands"]))
    if fair is not None and ("salt" in fair or "deck" in fair):
        assert ended, f"{what}: the deck is revealed while the round runs"
        public.update(fair["deck"])
    echoed: set[str] = set()  # cards a field repeats: they must be known already
    for e in m["events"]:
        kind = e["type"]
        if kind in PUBLIC_DISCARDS:
            public.add(e[PUBLIC_DISCARDS[kind]])
        if kind == "swapped" and e["card"] is not None:
            echoed.add(e["card"])
        elif kind == "drew":
            if e["source"] == "deck":
                assert e["card"] is None, f"{what}: {e}"
            else:
                echoed.add(e["card"])
        elif kind in ("round_ended", "deck_revealed"):
            assert ended, f"{what}: {e} while the round runs"
            public.update(card_codes(e))
    if r is not None and r["drawn"] is not None and r["drawn"]["card"] is not None:
        public.add(r["drawn"]["card"])  # taken from the discard pile, in everyone's sight

    unseen = echoed - who.known - public
    assert not unseen, f"{what}: repeats {sorted(unseen)} as public, but they were never shown"
    who.known |= private | public
    leaked = codes - who.known
    assert not leaked, f"{what}: leaks {sorted(leaked)} in {m}"
    # The server's truth: a face-down card appears only in its private reveal, and never on the table.
    face_down = (codes & truth.hidden) - private
    assert not face_down, f"{what}: face-down {sorted(face_down)} outside a private reveal: {m}"
    on_table = card_codes(table) & truth.hidden
    assert not on_table, f"{what}: face-down {sorted(on_table)} in the table view"
    who.checked += 1


def check_stream(messages: Sequence[Message], seat: int | None, code: str, spy: Spy) -> int:
    """Check every message one recipient was sent (over all its connections, in order)."""
    who = Recipient(seat)
    for m in messages:
        if m.get("type") in ("update", "snapshot"):
            check_message(who, m, spy.at(code, m["v"]))
        else:
            assert not card_codes(m), f"a {m.get('type')} message names a card: {m}"
    return who.checked


def check_everyone(bots: Bots, spy: Spy) -> int:
    checked = 0
    for p in bots.players:
        checked += check_stream([m for c in p.connections for m in c.messages], p.seat, bots.code, spy)
    for spectator in bots.spectators:
        checked += check_stream(spectator.messages, None, bots.code, spy)
    return checked


# -- the games -------------------------------------------------------------------------------------------


async def away_in_the_middle_of_a_move(bots: Bots, seat: int) -> None:
    """Play until ``seat`` holds a drawn card, then drop its connection for a few steps and resume."""
    for _ in range(1000):
        player = bots.players[seat]
        if player.client is not None and player.client.you["drawn_card"] is not None:
            break
        await bots.step()
    else:
        raise AssertionError(f"seat {seat} never drew")
    await bots.disconnect(seat)
    for _ in range(3):
        await bots.step()
    if bots.players[seat].client is None:
        await bots.resume(seat)


@dataclass(frozen=True)
class Setup:
    players: int
    turn_seconds: int | None
    discard_draw: bool
    patient: bool = False
    rematch: bool = False


#: Two games for each number of players, every option; "patient" players call Crisp only once the draw pile
#: has been turned over.
SETUPS: Final = [
    Setup(2, None, True, patient=True),
    Setup(3, 30, True, patient=True),
    Setup(4, 45, False, rematch=True),
    Setup(5, None, True),
    Setup(6, 60, True),
    Setup(7, 30, False),
    Setup(8, None, True),
    Setup(2, 45, False),
    Setup(3, None, False),
    Setup(4, 60, True),
    Setup(5, 30, False, patient=True),
    Setup(6, None, False),
    Setup(7, 45, True),
    Setup(8, 60, False, patient=True),
]


def _id(setup: Setup) -> str:
    clock = f"{setup.turn_seconds}s" if setup.turn_seconds else "untimed"
    extras = [name for name in ("discard_draw", "patient", "rematch") if getattr(setup, name)]
    return "-".join([f"{setup.players}p", clock, *extras])


@pytest.mark.parametrize("setup", SETUPS, ids=_id)
async def test_no_message_leaks_a_card(wire: Harness, monkeypatch: pytest.MonkeyPatch, setup: Setup) -> None:
    spy = Spy()
    spy.install(monkeypatch)
    rig(monkeypatch, seed=repr(setup))  # seeded decks: a failure can be replayed
    rng = random.Random(repr(setup))
    style = Style(
        crisp=0.1,
        patient=setup.patient,
        idle=0.03 if setup.turn_seconds else 0.0,
        ready=0.5,
        away=0.02,
        back=0.08,
        leave=0.0 if setup.rematch else 0.004,
    )
    options = {"score_limit": 100, "turn_seconds": setup.turn_seconds, "discard_draw": setup.discard_draw}
    bots = await Bots.start(wire, setup.players, rng, style=style, options=options, spectators=1)
    await away_in_the_middle_of_a_move(bots, setup.players - 1)
    await bots.play_game()
    if setup.rematch:
        host = bots.state["room"]["host"]
        if bots.connected(host) is None:
            await bots.resume(host)
        host_client = bots.connected(host)
        assert host_client is not None
        assert await bots.send(host_client, {"type": "rematch"}) is None
        assert bots.phase == "lobby"  # nothing of the finished game may be in what the lobby sends
        assert await bots.send(host_client, {"type": "start"}) is None
        await bots.play_game()

    checked = check_everyone(bots, spy)
    assert checked > 50 * (setup.players + 1)
    # The audit follows every round a member saw whole (the spectator saw all but the first deal).
    for p in bots.players:
        audit([m for c in p.connections for m in c.messages], p.seat, 100)
    report = audit(bots.spectators[0].messages, None, 100)
    assert report.rounds >= 1
    assert len(report.games) == (2 if setup.rematch else 1)
    if setup.patient:
        assert report.pile_turned > 0


@pytest.mark.interpreted  # it replaces a function of the compiled publishing module
async def test_the_leak_check_sees_a_face_down_card_on_the_table(
    wire: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The checks above must be able to fail: a server that shows the hands on the table is caught.
    spy = Spy()
    spy.install(monkeypatch)
    rig(monkeypatch, seed="leaky table")

    def leaky(game: Game) -> dict[str, Any]:
        view = table_view(game)
        if game.round is not None:
            view["round"]["hands"] = [list(h) for h in game.round.hands]
        return view

    monkeypatch.setattr(room_module, "table_view", leaky)
    bots = await Bots.start(wire, 2, random.Random(1), spectators=1)
    await bots.play_round()
    with pytest.raises(AssertionError, match="while the round runs"):
        check_everyone(bots, spy)


@pytest.mark.interpreted  # it replaces a function of the compiled publishing module
async def test_the_leak_check_sees_another_seats_private_card(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy()
    spy.install(monkeypatch)
    rig(monkeypatch, seed="leaky events")
    monkeypatch.setattr(room_module, "visible_to", lambda event, seat: True)
    bots = await Bots.start(wire, 3, random.Random(2), spectators=1)
    await bots.play_round()
    with pytest.raises(AssertionError, match="card_shown"):
        check_everyone(bots, spy)


async def test_a_spectator_is_sent_only_public_information(wire: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy()
    spy.install(monkeypatch)
    rig(monkeypatch, seed="spectator")
    options = {"score_limit": 100, "turn_seconds": None, "discard_draw": True}
    bots = await Bots.start(wire, 3, random.Random(3), options=options, spectators=1)
    await bots.ready_all()
    await bots.do(bots.round["turn"], {"type": "draw", "from": "deck"})
    late = await wire.client()  # comes in while a player holds a card from the draw pile
    await late.watch(bots.code)
    bots.spectators.append(late)
    await bots.settle()
    assert bots.state["room"]["spectators"] == 2
    assert late.state is not None
    assert late.state["table"]["round"]["drawn"] == {"from": "deck", "card": None}
    await bots.play_game()

    for watcher in bots.spectators:
        assert watcher.welcome is not None
        assert watcher.welcome["seat"] is None
        assert watcher.welcome["token"] is None
        for m in watcher.messages:
            if m["type"] in ("update", "snapshot"):
                assert m["you"] == {
                    "seat": None,
                    "drawn_card": None,
                    "can": [],
                    "spectator": True,
                    "host": False,
                    "hints": False,
                }
                assert not [e for e in m["events"] if e["type"] == "card_shown"]
        assert check_stream(watcher.messages, None, bots.code, spy) > 0
    for message in ({"type": "draw", "from": "deck"}, {"type": "crisp"}, {"type": "ready"}, {"type": "rematch"}):
        assert await bots.send(late, message) == "not_seated"
