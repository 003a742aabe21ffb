// The moves in words: the one sentence each event of a game reads as, shared by live play (the line under
// the table) and the replay (each step told). Your own moves read in the second person ("You discarded
// ..."): the same words under another key.

import { cardName, ev, levelName, listOf, slotName, t } from "./i18n.js";

/** The sentence for event `e` seen by seat `me` (null: a spectator, or a replay told in the third person),
 * with `who(seat)` the players' names now and `whoBefore(seat)` their names before the event (a player who
 * left or was removed is no longer in the room's seats). null when the event is not told. */
export function eventLine(e, me, who, whoBefore = who) {
  const said = (key, ...args) => ev(e.seat === me && me !== null ? `${key}You` : key, ...args);
  switch (e.type) {
    case "drew":
      return e.source === "discard" ? said("drewDiscard", who(e.seat), cardName(e.card)) : said("drewDeck", who(e.seat));
    case "swapped":
      return said("swapped", who(e.seat), slotName(e.slot), cardName(e.discarded));
    case "discarded":
      return said("discarded", who(e.seat), cardName(e.card));
    case "jack_used":
      return said("jack", who(e.seat));
    case "queen_used":
      if (e.target === me && me !== null) return t("queenOnYou", who(e.seat), slotName(e.target_slot), slotName(e.slot));
      if (e.seat === me && me !== null) return t("queenByYou", slotName(e.slot), who(e.target), slotName(e.target_slot));
      return ev("queen", who(e.seat), slotName(e.slot), who(e.target), slotName(e.target_slot));
    case "king_used":
      return said("king", who(e.seat), 2);
    case "timed_out":
      return said("timedOut", who(e.seat), cardName(e.discarded));
    case "pile_turned":
      return ev("pileTurned");
    case "crisp_called":
      return said("crisp", who(e.seat));
    case "round_ended":
      return ev("roundEnded");
    case "joined":
      return ev("joined", e.name);
    case "left":
      return ev("left", whoBefore(e.seat));
    case "disconnected":
      return ev("disconnected", who(e.seat));
    case "connected":
      return e.seat === me ? null : ev("connected", who(e.seat));
    case "bot_added":
      return ev("botAdded", e.name, levelName(e.level));
    case "bot_removed":
      return ev("botRemoved", whoBefore(e.seat));
    case "bot_level":
      return ev("botLevel", who(e.seat), levelName(e.level));
    case "stand_in":
      return ev("standIn", who(e.seat));
    default:
      return null;
  }
}

/** What a replay adds to the live sentences: the deal, the peeks, a Crisp window that closed and the game's
 * end. `me`: the seat told in the second person ("You looked at your left card"), the watcher's own in the
 * replay of their own point of view; null: everyone in the third person. */
export function replayLine(e, who, me = null) {
  switch (e.type) {
    case "round_started":
      return t("replayDealt", e.round + 1, who(e.dealer));
    case "card_shown":
      if (!e.slot) return null;
      if (e.seat === me && me !== null) return t("replaySawYou", slotName(e.slot), cardName(e.card));
      return t("replaySaw", who(e.seat), slotName(e.slot), cardName(e.card));
    case "window_opened":
      return null; // the table's prompt says it: "Ana may call Crisp"
    case "window_closed":
      return t("replayWindowClosed", who(e.seat));
    case "game_ended":
      return t("replayGameOver", listOf(e.winners.map((s) => who(s))), e.winners.length);
    default:
      return eventLine(e, me, who);
  }
}
