"""The lesson ("Learn to play"), as data: its deal and its steps, in one place.

A lesson room (``create`` with ``lesson``) seats its learner at seat 0 and two computer players at seats 1 and
2, and deals one round from :data:`DECK` with seat 2 as the dealer, so that the learner moves first. The deal
is chosen so that every rule comes up in order: the peek at the left and right card, drawing and keeping a card,
drawing and throwing one away, a Jack, a Queen, a King and its two extra moves, the Crisp call, the final turns
and the round's sums with the caller's -5. (The discard pile is not turned over in one round of three players:
the draw pile holds 43 cards; a step tells it.)

Each :class:`Step` waits for one thing: ``next`` (a step that is read: the learner sends ``lesson_next``),
``move`` (one move of the learner, ``move``, as the client sends it), or ``computers`` (the computer players'
moves, ``computers``, which the lesson plays at a pace a person can follow, then goes on by itself). What the
engine's state is when the step is shown is in ``expect``: the tests read it against the engine's view, and the
prompts (the client's catalogs, ``lesson`` section, one text per step id) say the same.

The texts live in the client's catalogs; the server only knows the step ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from crisp_server.engine import FULL_DECK

#: The learner's seat, and the computer players'.
LEARNER: Final = 0
COMPUTERS: Final = (1, 2)
#: The dealer of the lesson's round: the seat after it (the learner) moves first.
FIRST_DEALER: Final = 2

# Dealt from index 0 (seats 0, 1, 2: left cards, then middles, then rights); the draw pile follows, top first.
_DEALT: Final = ("9S", "8H", "7C", "KD", "6C", "TH", "3C", "5D", "4S")
_DRAWN: Final = (
    "2H", "TD", "AS",  # 1st round of turns: you keep the 2; Ada throws the 10 away; Alan keeps the Ace
    "8D", "3H", "9C",  # you throw the 8 away; Ada keeps the 3; Alan throws the 9 away
    "JH", "2C", "6H",  # your Jack; Ada keeps the 2; Alan throws the 6 away
    "QS", "7S", "5C",  # your Queen; Ada keeps the 7 in place of the King you gave her; Alan throws the 5 away
    "KH", "AH", "TS", "9H", "6D",  # your King, then the Ace you keep and the 10 you throw away; Ada, Alan
    "2S", "4H", "3D",  # the 2 you keep, then Crisp; the final turns: Ada and Alan keep theirs
)  # fmt: skip
#: The lesson's deck: the cards above, then the rest of the deck in its usual order.
DECK: Final[tuple[str, ...]] = (*_DEALT, *_DRAWN, *(c for c in FULL_DECK if c not in _DEALT + _DRAWN))

#: A computer player's move: (seat, the message it sends, as a client would).
Scripted = tuple[int, dict[str, Any]]


def _turn(seat: int, keep: str | None) -> tuple[Scripted, ...]:
    """A computer player's turn: draw from the draw pile, then keep the card in ``keep``'s slot or throw it away."""
    play: dict[str, Any] = {"type": "swap", "slot": keep} if keep else {"type": "discard"}
    return ((seat, {"type": "draw", "from": "deck"}), (seat, play))


@dataclass(frozen=True)
class Expect:
    """What the engine's state is when the step is shown (``None``: not checked)."""

    phase: str
    #: Whose turn it is (``play``).
    turn: int | None = None
    #: The card the learner holds, drawn and not yet played.
    drawn: str | None = None
    #: The learner's cards the step names: slot -> card.
    hand: dict[str, str] = field(default_factory=dict)
    #: Other players' cards the step names: (seat, slot, card).
    theirs: tuple[tuple[int, str, str], ...] = ()
    #: The seat whose crisp window is open, if one must be.
    window: int | None = None
    #: A King's extra moves left after the one under way.
    extra_moves: int | None = None
    #: Who called Crisp.
    caller: int | None = None
    #: Once the round is over: each seat's sum and points.
    sums: tuple[int, ...] | None = None
    points: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Step:
    id: str
    wait: Literal["next", "move", "computers"]
    expect: Expect
    #: ``move``: the learner's move the step waits for, as the client sends it.
    move: dict[str, Any] | None = None
    #: ``computers``: the computer players' moves, in order.
    computers: tuple[Scripted, ...] = ()


def _draw(step: str, expect: Expect) -> Step:
    return Step(step, "move", expect, {"type": "draw", "from": "deck"})


_MINE: Final = Expect("play", turn=LEARNER)

STEPS: Final[tuple[Step, ...]] = (
    Step("welcome", "next", Expect("peek")),
    Step("peek", "move", Expect("peek", hand={"left": "9S", "right": "3C"}), {"type": "ready"}),
    _draw("draw", _MINE),
    Step(
        "keep", "move", Expect("play", turn=LEARNER, drawn="2H", hand={"left": "9S"}), {"type": "swap", "slot": "left"}
    ),
    Step("others", "computers", Expect("play", turn=1, window=LEARNER), computers=_turn(1, None) + _turn(2, "middle")),
    _draw("draw_again", Expect("play", turn=LEARNER, window=2)),
    Step(
        "throw",
        "move",
        Expect("play", turn=LEARNER, drawn="8D", hand={"left": "2H", "right": "3C"}),
        {"type": "discard"},
    ),
    Step("others_again", "computers", Expect("play", turn=1), computers=_turn(1, "left") + _turn(2, None)),
    _draw("draw_jack", _MINE),
    Step("jack", "move", Expect("play", turn=LEARNER, drawn="JH"), {"type": "jack"}),
    Step(
        "jack_seen",
        "computers",
        Expect("play", turn=1, hand={"middle": "KD"}),
        computers=_turn(1, "middle") + _turn(2, None),
    ),
    _draw("draw_queen", _MINE),
    Step(
        "queen",
        "move",
        Expect("play", turn=LEARNER, drawn="QS", hand={"middle": "KD"}),
        {"type": "queen", "slot": "middle", "target": 1, "target_slot": "right"},
    ),
    Step(
        "queen_done",
        "computers",
        Expect("play", turn=1, hand={"middle": "5D"}, theirs=((1, "right", "KD"),)),
        computers=_turn(1, "right") + _turn(2, None),
    ),
    _draw("draw_king", _MINE),
    Step("king", "move", Expect("play", turn=LEARNER, drawn="KH"), {"type": "king"}),
    _draw("extra_draw", Expect("play", turn=LEARNER, extra_moves=1)),
    Step(
        "extra_keep",
        "move",
        Expect("play", turn=LEARNER, drawn="AH", hand={"right": "3C"}),
        {"type": "swap", "slot": "right"},
    ),
    _draw("extra_draw_again", Expect("play", turn=LEARNER, extra_moves=0)),
    Step("extra_throw", "move", Expect("play", turn=LEARNER, drawn="TS"), {"type": "discard"}),
    Step("pile", "computers", Expect("play", turn=1), computers=_turn(1, None) + _turn(2, None)),
    _draw("draw_last", _MINE),
    Step(
        "keep_last",
        "move",
        Expect("play", turn=LEARNER, drawn="2S", hand={"middle": "5D"}),
        {"type": "swap", "slot": "middle"},
    ),
    Step(
        "crisp",
        "move",
        Expect("play", turn=1, window=LEARNER, hand={"left": "2H", "middle": "2S", "right": "AH"}),
        {"type": "crisp"},
    ),
    Step(
        "final_turns",
        "computers",
        Expect("play", turn=1, caller=LEARNER),
        computers=_turn(1, "right") + _turn(2, "left"),
    ),
    Step("sums", "next", Expect("round_over", caller=LEARNER, sums=(5, 9, 8), points=(0, 9, 8))),
    Step("game_end", "next", Expect("round_over")),
    Step("done", "next", Expect("round_over")),
)
"""The lesson's steps, in order; the last one ends it (the client offers a game from there)."""


def step_index(step_id: str) -> int:
    """The index of the step ``step_id`` (tests, and a lesson rebuilt from the database)."""
    return next(i for i, s in enumerate(STEPS) if s.id == step_id)
