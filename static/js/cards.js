// Cards on screen: rank and suit by symbol and colour, with a spoken name for screen readers.

import { h } from "./dom.js";
import { cardName, t } from "./i18n.js";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RANKS = { T: "10" };

export function rankText(code) {
  return RANKS[code[0]] ?? code[0];
}

export function suitSymbol(code) {
  return SUITS[code[1]];
}

export function isRed(code) {
  return code[1] === "H" || code[1] === "D";
}

/** A face-up card (`code`) or a face-down one (`code` null). `extra` adds classes. */
export function cardFace(code, extra = "") {
  if (!code) {
    return h("span", { class: `card back ${extra}`, "aria-hidden": "true" });
  }
  return h(
    "span",
    { class: `card face ${isRed(code) ? "red" : "black"} ${extra}`, "aria-hidden": "true" },
    h("span", { class: "corner" }, rankText(code), h("span", { class: "suit" }, suitSymbol(code))),
    h("span", { class: "pip" }, suitSymbol(code)),
  );
}

/** A short inline text for a card in sentences: "7♥". */
export function cardLabel(code) {
  return `${rankText(code)}${suitSymbol(code)}`;
}

export function spoken(code) {
  return code ? cardName(code) : t("faceDown");
}
