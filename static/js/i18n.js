// German and English: chosen from the browser's language, switchable, remembered.

const LANG_KEY = "crisp.lang";

/** A German name in the genitive: "Anas", but "Hans’" and "Max’" (Duden: an apostrophe after s, ß, x, z). */
function genitive(name) {
  return /[sßxz]$/i.test(name) ? `${name}’` : `${name}s`;
}

const STRINGS = {
  en: {
    tagline: "The card game of memory and bluff",
    yourName: "Your name",
    createRoom: "Create a room",
    joinRoom: "Join a room",
    roomCode: "Room code",
    join: "Join",
    watch: "Watch",
    howToPlay: "How to play",
    language: "Deutsch",
    languageLabel: "Sprache: Deutsch",
    lobby: "Lobby",
    inviteFriends: "Invite your friends",
    copyLink: "Copy link",
    copied: "Copied!",
    share: "Share",
    qrAlt: "QR code of the join link",
    players: "Players",
    host: "Host",
    you: "you",
    connected: "connected",
    away: "away",
    leftGame: "left",
    kick: "Remove",
    kickLabel: (name) => `Remove ${name} from the room`,
    options: "Options",
    scoreLimit: "Score limit",
    turnTimer: "Turn timer",
    none: "none",
    seconds: (s) => `${s} s`,
    discardDraw: "Drawing from the discard pile",
    on: "on",
    off: "off",
    start: "Start the game",
    waitingForHost: (name) => `Waiting for ${name} to start the game…`,
    needPlayers: "2 to 8 players can play.",
    leave: "Leave",
    leaveConfirm: "Leave this room?",
    spectating: "You are watching",
    spectators: (n) => (n === 1 ? "1 spectator" : `${n} spectators`),
    round: (k) => `Round ${k}`,
    drawPile: "Draw pile",
    drawPileCount: (n) => (n === 1 ? "Draw pile, 1 card" : `Draw pile, ${n} cards`),
    discardPile: "Discard pile",
    discardEmpty: "Discard pile, empty",
    discardTop: (card) => `Discard pile, top card ${card}`,
    yourTurn: "Your turn",
    turnOf: (name) => `${name}'s turn`,
    draw: "Draw",
    takeDiscard: "Take discard",
    discardIt: "Discard",
    useJack: "Jack: peek at your middle card",
    useQueen: "Queen: swap blind",
    useKing: "King: two extra moves",
    swapHint: "Tap one of your cards to swap it",
    mustSwapHint: "Tap one of your cards: this card must go into your hand",
    queenPickMine: "Queen: pick one of your cards",
    queenPickTheirs: "Queen: now pick another player's card",
    cancel: "Cancel",
    extraMoves: (k) => (k === 1 ? "1 extra move left" : `${k} extra moves left`),
    youDrew: "You drew",
    drawnBy: (name) => `${name} is holding a card`,
    crisp: "Crisp!",
    crispHint: "Call Crisp if you think your sum is the lowest",
    finalTurns: (name) => `${name} called Crisp: final turns!`,
    peekTitle: "Remember your cards",
    peekHint: "Your left and right card, for a few seconds. The middle one stays a secret.",
    ready: "Ready",
    waitingOthers: "Waiting for the others…",
    roundOver: "Round over",
    gameOver: "Game over",
    sum: "Sum",
    points: "Points",
    total: "Total",
    caller: "called Crisp",
    winner: "Winner",
    winners: "Winners",
    sharedWin: "A shared win!",
    youWon: "You won!",
    rematch: "Rematch",
    waitingRematch: (name) => `Waiting for ${name} to start a rematch…`,
    nextRoundIn: (s) => `Next round in ${s} s`,
    deckVerified: "Deck verified: it was fixed before the deal",
    deckNotVerified: "Deck check FAILED",
    deckChecking: "Checking the deck…",
    scoreboard: "Scores",
    reconnecting: "Reconnecting…",
    connecting: "Connecting…",
    offlineClosed: "Disconnected",
    replaced: "This seat is now open in another tab or on another device.",
    kicked: "The host removed you from the room.",
    restarting: "The server is restarting: reconnecting in a moment…",
    roomGone: "This room does not exist any more.",
    pastGames: "Past games in this room",
    goneGames: (code) => `Games of room ${code}`,
    abandoned: "unfinished: nobody came back",
    downloadRecord: "Record",
    recordUnavailable: "The record could not be downloaded.",
    reactions: "Reactions",
    react: (e) => `Send ${e}`,
    sound: "Sound",
    vibration: "Vibration",
    settings: "Settings",
    close: "Close",
    back: "Back",
    cardNames: { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" },
    suitNames: { S: "spades", H: "hearts", D: "diamonds", C: "clubs" },
    cardName: (rank, suit) => `${rank} of ${suit}`,
    faceDown: "face down",
    slotNames: { left: "left", middle: "middle", right: "right" },
    yourCard: (slot) => `Your ${slot} card`,
    theirCard: (name, slot) => `${name}'s ${slot} card`,
    timeLeft: (s) => (s === 1 ? "1 second left" : `${s} seconds left`),
    ev: {
      drewDeck: (n) => `${n} drew from the draw pile.`,
      drewDiscard: (n, c) => `${n} took ${c} from the discard pile.`,
      swapped: (n, slot, c) => `${n} swapped their ${slot} card and discarded ${c}.`,
      discarded: (n, c) => `${n} discarded ${c}.`,
      jack: (n) => `${n} used a Jack and peeked at their middle card.`,
      queen: (n, slot, t, tslot) => `${n} used a Queen: their ${slot} card for ${t}'s ${tslot} card.`,
      king: (n, k) => `${n} used a King: ${k} extra moves.`,
      timedOut: (n, c) => `${n} ran out of time (${c} discarded).`,
      pileTurned: "The discard pile was turned over as the new draw pile.",
      crisp: (n) => `${n} called Crisp!`,
      roundEnded: "The round is over.",
      joined: (n) => `${n} joined.`,
      left: (n) => `${n} left.`,
      disconnected: (n) => `${n} lost the connection.`,
      connected: (n) => `${n} is back.`,
    },
  },
  de: {
    tagline: "Das Kartenspiel aus Gedächtnis und Bluff",
    yourName: "Dein Name",
    createRoom: "Raum erstellen",
    joinRoom: "Raum beitreten",
    roomCode: "Raumcode",
    join: "Beitreten",
    watch: "Zuschauen",
    howToPlay: "So wird gespielt",
    language: "English",
    languageLabel: "Language: English",
    lobby: "Warteraum",
    inviteFriends: "Freunde einladen",
    copyLink: "Link kopieren",
    copied: "Kopiert!",
    share: "Teilen",
    qrAlt: "QR-Code zum Beitreten",
    players: "Spieler",
    host: "Gastgeber",
    you: "du",
    connected: "verbunden",
    away: "abwesend",
    leftGame: "gegangen",
    kick: "Entfernen",
    kickLabel: (name) => `${name} aus dem Raum entfernen`,
    options: "Optionen",
    scoreLimit: "Punktegrenze",
    turnTimer: "Zeit pro Zug",
    none: "unbegrenzt",
    seconds: (s) => `${s} s`,
    discardDraw: "Vom Ablagestapel ziehen",
    on: "an",
    off: "aus",
    start: "Spiel starten",
    waitingForHost: (name) => `Warte, bis ${name} das Spiel startet\u00a0…`,
    needPlayers: "Es können 2 bis 8 Spieler mitspielen.",
    leave: "Verlassen",
    leaveConfirm: "Diesen Raum verlassen?",
    spectating: "Du schaust zu",
    spectators: (n) => (n === 1 ? "1 Zuschauer" : `${n} Zuschauer`),
    round: (k) => `Runde ${k}`,
    drawPile: "Nachziehstapel",
    drawPileCount: (n) => (n === 1 ? "Nachziehstapel, 1 Karte" : `Nachziehstapel, ${n} Karten`),
    discardPile: "Ablagestapel",
    discardEmpty: "Ablagestapel, leer",
    discardTop: (card) => `Ablagestapel, oben liegt ${card}`,
    yourTurn: "Du bist dran",
    turnOf: (name) => `${name} ist dran`,
    draw: "Ziehen",
    takeDiscard: "Ablage nehmen",
    discardIt: "Ablegen",
    useJack: "Bube: mittlere Karte ansehen",
    useQueen: "Dame: blind tauschen",
    useKing: "König: zwei Extrazüge",
    swapHint: "Tippe auf eine deiner Karten, um sie zu tauschen",
    mustSwapHint: "Tippe auf eine deiner Karten: Diese Karte muss in deine Hand",
    queenPickMine: "Dame: Wähle eine deiner Karten",
    queenPickTheirs: "Dame: Wähle jetzt eine Karte eines Mitspielers",
    cancel: "Abbrechen",
    extraMoves: (k) => (k === 1 ? "noch 1 Extrazug" : `noch ${k} Extrazüge`),
    youDrew: "Du hast gezogen",
    drawnBy: (name) => `${name} hält eine Karte`,
    crisp: "Crisp!",
    crispHint: "Ruf Crisp, wenn du glaubst, dass deine Summe die niedrigste ist",
    finalTurns: (name) => `${name} hat Crisp gerufen: letzte Züge!`,
    peekTitle: "Merk dir deine Karten",
    peekHint: "Deine linke und deine rechte Karte, ein paar Sekunden lang. Die mittlere bleibt geheim.",
    ready: "Bereit",
    waitingOthers: "Warte auf die anderen\u00a0…",
    roundOver: "Runde vorbei",
    gameOver: "Spiel vorbei",
    sum: "Summe",
    points: "Punkte",
    total: "Gesamt",
    caller: "hat Crisp gerufen",
    winner: "Gewinner",
    winners: "Gewinner",
    sharedWin: "Unentschieden!",
    youWon: "Du hast gewonnen!",
    rematch: "Revanche",
    waitingRematch: (name) => `Warte, bis ${name} die Revanche startet\u00a0…`,
    nextRoundIn: (s) => `Nächste Runde in ${s} s`,
    deckVerified: "Kartenstapel geprüft: vor dem Austeilen festgelegt",
    deckNotVerified: "Prüfung des Kartenstapels FEHLGESCHLAGEN",
    deckChecking: "Kartenstapel wird geprüft\u00a0…",
    scoreboard: "Punktestand",
    reconnecting: "Verbindung wird wiederhergestellt\u00a0…",
    connecting: "Verbindung wird hergestellt\u00a0…",
    offlineClosed: "Verbindung getrennt",
    replaced: "Dieser Platz ist jetzt in einem anderen Tab oder auf einem anderen Gerät geöffnet.",
    kicked: "Der Gastgeber hat dich aus dem Raum entfernt.",
    restarting: "Der Server startet neu. Gleich geht es weiter\u00a0…",
    roomGone: "Diesen Raum gibt es nicht mehr.",
    pastGames: "Frühere Spiele in diesem Raum",
    goneGames: (code) => `Spiele in Raum ${code}`,
    abandoned: "unvollendet: niemand kam zurück",
    downloadRecord: "Protokoll",
    recordUnavailable: "Das Protokoll konnte nicht heruntergeladen werden.",
    reactions: "Reaktionen",
    react: (e) => `${e} senden`,
    sound: "Ton",
    vibration: "Vibration",
    settings: "Einstellungen",
    close: "Schließen",
    back: "Zurück",
    cardNames: { A: "Ass", T: "10", J: "Bube", Q: "Dame", K: "König" },
    suitNames: { S: "Pik", H: "Herz", D: "Karo", C: "Kreuz" },
    cardName: (rank, suit) => `${suit} ${rank}`,
    faceDown: "verdeckt",
    slotNames: { left: "linke", middle: "mittlere", right: "rechte" },
    yourCard: (slot) => `Deine ${slot} Karte`,
    theirCard: (name, slot) => `${genitive(name)} ${slot} Karte`,
    timeLeft: (s) => (s === 1 ? "noch 1 Sekunde" : `noch ${s} Sekunden`),
    ev: {
      drewDeck: (n) => `${n} hat vom Nachziehstapel gezogen.`,
      drewDiscard: (n, c) => `${n} hat ${c} vom Ablagestapel genommen.`,
      swapped: (n, slot, c) => `${n} hat die ${slot} Karte getauscht und ${c} abgelegt.`,
      discarded: (n, c) => `${n} hat ${c} abgelegt.`,
      jack: (n) => `${n} hat mit einem Buben die eigene mittlere Karte angesehen.`,
      queen: (n, slot, t, tslot) => `${n} hat mit einer Dame die ${slot} Karte gegen ${genitive(t)} ${tslot} getauscht.`,
      king: (n, k) => `${n} hat einen König gespielt: ${k} Extrazüge.`,
      timedOut: (n, c) => `Bei ${n} ist die Zeit abgelaufen (${c} abgelegt).`,
      pileTurned: "Der Ablagestapel wurde zum neuen Nachziehstapel umgedreht.",
      crisp: (n) => `${n} hat Crisp gerufen!`,
      roundEnded: "Die Runde ist vorbei.",
      joined: (n) => `${n} ist dazugekommen.`,
      left: (n) => `${n} ist gegangen.`,
      disconnected: (n) => `${n} hat die Verbindung verloren.`,
      connected: (n) => `${n} ist wieder da.`,
    },
  },
};

function initialLang() {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved === "en" || saved === "de") return saved;
  } catch {
    /* no storage */
  }
  const prefs = navigator.languages || [navigator.language || "en"];
  for (const p of prefs) {
    const code = String(p).slice(0, 2).toLowerCase();
    if (code === "de" || code === "en") return code;
  }
  return "en";
}

let lang = initialLang();

export function getLang() {
  return lang;
}

export function setLang(next) {
  lang = next === "de" ? "de" : "en";
  document.documentElement.lang = lang;
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    /* no storage */
  }
}

/** The text for `key` in the current language (a function for texts with values). */
export function t(key, ...args) {
  const value = STRINGS[lang][key] ?? STRINGS.en[key];
  return typeof value === "function" ? value(...args) : value;
}

export function ev(key, ...args) {
  const fn = STRINGS[lang].ev[key] ?? STRINGS.en.ev[key];
  return typeof fn === "function" ? fn(...args) : fn;
}

/** A card's spoken name, e.g. "7 of hearts" / "Herz 7". */
export function cardName(code) {
  const s = STRINGS[lang];
  const rank = s.cardNames[code[0]] ?? code[0];
  return s.cardName(rank, s.suitNames[code[1]]);
}

export function slotName(slot) {
  return STRINGS[lang].slotNames[slot] ?? slot;
}

document.documentElement.lang = lang;
