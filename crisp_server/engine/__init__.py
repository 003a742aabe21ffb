"""The rules of Crisp, pure: no I/O, no clock, no randomness of its own (time and decks are inputs).

Import from here: the submodules' layout may change, these names will not.
"""

from .actions import (
    ACTION_NAMES,
    Action,
    CallCrisp,
    Discard,
    Draw,
    Source,
    Swap,
    TimeOut,
    UseJack,
    UseKing,
    UseQueen,
)
from .cards import FULL_DECK, Slot, card_name, hand_sum, value
from .events import Event, Why, event_to_dict, redone_by_resume, visible_to
from .game import CRISP_WINDOW_MS, DRAW_BLOCK_MS, MAX_PLAYERS, MIN_PLAYERS, Game, Options, Reveal, Round
from .record import (
    FORMAT,
    MalformedRecord,
    Record,
    RecordRound,
    Resume,
    Timed,
    dumps_record,
    loads_record,
    parse_record,
    record_to_dict,
    replay,
    replay_game,
)
from .rejections import Code, Rejected, message

__all__ = [
    "ACTION_NAMES",
    "CRISP_WINDOW_MS",
    "DRAW_BLOCK_MS",
    "FORMAT",
    "FULL_DECK",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Action",
    "CallCrisp",
    "Code",
    "Discard",
    "Draw",
    "Event",
    "Game",
    "MalformedRecord",
    "Options",
    "Record",
    "RecordRound",
    "Rejected",
    "Resume",
    "Reveal",
    "Round",
    "Slot",
    "Source",
    "Swap",
    "TimeOut",
    "Timed",
    "UseJack",
    "UseKing",
    "UseQueen",
    "Why",
    "card_name",
    "dumps_record",
    "event_to_dict",
    "hand_sum",
    "loads_record",
    "message",
    "parse_record",
    "record_to_dict",
    "redone_by_resume",
    "replay",
    "replay_game",
    "value",
    "visible_to",
]
