// The client's texts: one catalog per language (lang/en.js, lang/de.js ...), chosen from the browser's
// preferred languages until the player picks one, which is remembered. English is always loaded: a text a
// catalog lacks falls back to it (a test fails on any missing key); the player's language is loaded before
// the first screen is drawn, and another one when the player picks it.

import en from "./lang/en.js";

const LANG_KEY = "crisp.lang";

/** The languages the client speaks, each named in itself. */
export const LANGUAGES = { en: "English", de: "Deutsch", it: "Italiano", nl: "Nederlands" };

const catalogs = { en };

async function load(code) {
  if (!catalogs[code]) catalogs[code] = (await import(`./lang/${code}.js`)).default;
  return catalogs[code];
}

function known(code) {
  return Object.hasOwn(LANGUAGES, code);
}

/** The remembered choice, else the first of the browser's preferred languages that the client speaks. */
function initialLang() {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved && known(saved)) return saved;
  } catch {
    /* no storage */
  }
  const prefs = navigator.languages?.length ? navigator.languages : [navigator.language || "en"];
  for (const p of prefs) {
    const code = String(p).slice(0, 2).toLowerCase();
    if (known(code)) return code;
  }
  return "en";
}

let lang = initialLang();
try {
  await load(lang);
} catch {
  lang = "en"; // the catalog could not be fetched (offline before it was cached): English is here
}

export function getLang() {
  return lang;
}

/** Switch to the language `next` (loading its catalog) and remember it. A page older than the server's
 * files (a deploy since it opened) may not find the catalog under the name it knows: it remembers the
 * choice and loads again, in the language chosen. */
export async function setLang(next) {
  const code = known(next) ? next : "en";
  try {
    await load(code);
  } catch {
    try {
      localStorage.setItem(LANG_KEY, code);
    } catch {
      /* no storage */
    }
    if (navigator.onLine !== false) location.reload();
    return;
  }
  lang = code;
  document.documentElement.lang = lang;
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    /* no storage */
  }
}

/** The catalog of the current language. */
function strings() {
  return catalogs[lang];
}

/** The text for `key` in the current language (a function for texts with values). */
export function t(key, ...args) {
  const value = strings()[key] ?? en[key];
  return typeof value === "function" ? value(...args) : value;
}

export function ev(key, ...args) {
  const fn = strings().ev[key] ?? en.ev[key];
  return typeof fn === "function" ? fn(...args) : fn;
}

/** The rules page of `code` (the current language by default): its title and sections. */
export function rulesText(code = lang) {
  return (catalogs[code] ?? strings()).rules ?? en.rules;
}

/** Names in a sentence, joined as the language joins them: "Ana and Ben", "Ana, Ben, and Cem" / "Ana und
 * Ben", "Ana, Ben und Cem". */
export function listOf(items) {
  const list = items.map(String);
  try {
    return new Intl.ListFormat(lang, { style: "long", type: "conjunction" }).format(list);
  } catch {
    // A browser without Intl.ListFormat: the last two joined by the language's "and".
    const and = ` ${t("and")} `;
    return list.length < 2 ? list.join("") : `${list.slice(0, -1).join(", ")}${and}${list[list.length - 1]}`;
  }
}

/** A card's spoken name, e.g. "7 of hearts" / "Herz 7". */
export function cardName(code) {
  const s = strings();
  const rank = s.cardNames[code[0]] ?? code[0];
  return s.cardName(rank, s.suitNames[code[1]]);
}

/** A slot's name inside a sentence ("your left card" / "deine linke Karte"). */
export function slotName(slot) {
  return strings().slotNames[slot] ?? slot;
}

/** A computer player's level as players read it ("Hard" / "Schwer"). */
export function levelName(level) {
  return strings().levels[level] ?? level;
}

/** A slot's name standing alone, as a card's label ("left" / "links"). */
export function slotLabel(slot) {
  return strings().slotLabels[slot] ?? slot;
}

document.documentElement.lang = lang;
