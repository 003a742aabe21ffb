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
    draw: "Draw",
    takeDiscard: "Take discard",
    discardIt: "Discard",
    useJack: "Jack: peek at your middle card",
    useQueen: "Queen: swap blind",
    useKing: "King: two extra moves",
    swapHint: "Tap one of your cards to swap it",
    mustSwapHint: "Tap one of your cards: this card must go into your hand",
    specialHint: "Use the card's power, or discard it",
    kingHint: "The King must be played",
    queenPickMine: "Queen: pick one of your cards",
    cancel: "Cancel",
    youDrew: "You drew",
    drawnBy: (name) => `${name} is holding a card`,
    crisp: "Crisp!",
    crispHint: "Call Crisp if you think your sum is the lowest",
    peekTitle: "Remember your cards",
    peekHint: "Your left and right card, for a few seconds. The middle one stays a secret.",
    ready: "Ready",
    waitingOthers: "Waiting for the others…",
    roundOver: "Round over",
    gameOver: "Game over",
    sum: "Sum",
    total: "Total",
    caller: "called Crisp",
    winner: "Winner",
    winners: "Winners",
    sharedWin: "A shared win!",
    youWon: "You won!",
    rematch: "Rematch",
    waitingRematch: (name) => `Waiting for ${name} to start a rematch…`,
    nextRoundIn: (s) => `Next round in ${s} s`,
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
    // The switches' words, on the home screen, in the lobby and (as the icons' names) at the table.
    soundState: (on) => (on ? "Sound: on" : "Sound: off"),
    vibrationState: (on) => (on ? "Vibration: on" : "Vibration: off"),
    settings: "Settings",
    close: "Close",
    back: "Back",
    cardNames: { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" },
    suitNames: { S: "spades", H: "hearts", D: "diamonds", C: "clubs" },
    cardName: (rank, suit) => `${rank} of ${suit}`,
    faceDown: "face down",
    slotNames: { left: "left", middle: "middle", right: "right" },
    slotLabels: { left: "left", middle: "middle", right: "right" },
    yourCard: (slot) => `Your ${slot} card`,
    theirCard: (name, slot) => `${name}'s ${slot} card`,
    timeLeft: (s) => (s === 1 ? "1 second left" : `${s} seconds left`),
    // The table as players follow it (issue 14).
    dealer: "Dealer",
    dealerShort: "D",
    youMayCall: "You may call Crisp",
    mayCall: (n) => `${n} may call Crisp`,
    mayCallThenYou: (n) => `${n} may call Crisp, then it is your turn`,
    yourTurnDraw: "Your turn: draw",
    turnDraw: (n) => `${n}: draw`,
    turnPlay: (n) => `${n}: play the drawn card`,
    timeLeftLabel: "Time left for this move",
    extraMovesToPlay: (k) => (k === 1 ? "Last extra move" : `${k} extra moves to play`),
    finalTurnsLeft: (name, k) => `${name} called Crisp: ${k === 1 ? "1 final turn" : `${k} final turns`} left`,
    queenPickTheirsFor: (slot) => `Queen: your ${slot} card is picked; now pick another player's card`,
    picked: "picked",
    yourTotal: (n) => `Total ${n}`,
    watchGame: "Watch the game",
    gameStartedLate: "This game has already started, so nobody can join it now. Watch it: seats open again when the room goes back to the lobby.",
    roomFullLate: "All 8 seats are taken. Watch the game: a seat opens if someone leaves before the start.",
    player: "Player",
    cards: "Cards",
    crispBonus: "Crisp bonus",
    roundPoints: "Round",
    roundShort: (k) => `R${k}`,
    callerAlone: (n) => `${n} called Crisp and had the lowest sum alone: −5.`,
    callerBeaten: (n, rivals) => `${n} called Crisp, but ${rivals} had less or the same: +5.`,
    deckVerifiedPlain: "Fair deck: your browser checked that the cards were fixed before the deal and nobody changed them.",
    deckNotVerifiedPlain: "The deck check failed: the cards dealt do not match the deck fixed before the deal.",
    fairHow: "How?",
    queenOnYou: (n, mine, theirs) => `${n} swapped your ${mine} card with their ${theirs} one.`,
    queenByYou: (mine, n, theirs) => `You swapped your ${mine} card with ${n}'s ${theirs} card.`,
    // Computer players (issue 17).
    playComputer: "Play against the computer",
    playComputerHint: "It starts at once. When it is your move, you can ask for a hint.",
    computerPlayers: "Computer players",
    level: "Level",
    levels: { easy: "Easy", normal: "Normal", hard: "Hard" },
    playNow: "Play now",
    botLabel: (level) => `Computer player, level ${level.toLowerCase()}`,
    botLevelOf: (name) => `Level of ${name}`,
    addBot: "Computer player",
    addBotLabel: "Add a computer player",
    newBotLevel: "Level of the new computer player",
    standIn: "Computer stand-in",
    standInHelp: "A computer player takes over for anyone who leaves or is away longer than this.",
    playingFor: "playing for",
    playingForShort: "for",
    playingForLabel: (name) => `A computer player is playing for ${name}`,
    hint: "Hint",
    hintLabel: "Hint: what would a strong computer player do?",
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
      botAdded: (n, level) => `🤖 ${n} (${level.toLowerCase()}) joined.`,
      botRemoved: (n) => `${n} was removed.`,
      botLevel: (n, level) => `${n} now plays at level ${level.toLowerCase()}.`,
      standIn: (n) => `🤖 A computer now plays for ${n}.`,
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
    draw: "Ziehen",
    takeDiscard: "Ablage nehmen",
    discardIt: "Ablegen",
    useJack: "Bube: mittlere Karte ansehen",
    useQueen: "Dame: blind tauschen",
    useKing: "König: zwei Extrazüge",
    swapHint: "Tippe auf eine deiner Karten, um sie zu tauschen",
    mustSwapHint: "Tippe auf eine deiner Karten: Diese Karte muss in deine Hand",
    specialHint: "Nutze die Sonderkarte oder leg sie ab",
    kingHint: "Der König muss gespielt werden",
    queenPickMine: "Dame: Wähle eine deiner Karten",
    cancel: "Abbrechen",
    youDrew: "Du hast gezogen",
    drawnBy: (name) => `${name} hält eine Karte`,
    crisp: "Crisp!",
    crispHint: "Ruf Crisp, wenn du glaubst, dass deine Summe die niedrigste ist",
    peekTitle: "Merk dir deine Karten",
    peekHint: "Deine linke und deine rechte Karte, ein paar Sekunden lang. Die mittlere bleibt geheim.",
    ready: "Bereit",
    waitingOthers: "Warte auf die anderen\u00a0…",
    roundOver: "Runde vorbei",
    gameOver: "Spiel vorbei",
    sum: "Summe",
    total: "Gesamt",
    caller: "hat Crisp gerufen",
    winner: "Gewinner",
    winners: "Gewinner",
    sharedWin: "Unentschieden!",
    youWon: "Du hast gewonnen!",
    rematch: "Revanche",
    waitingRematch: (name) => `Warte, bis ${name} die Revanche startet\u00a0…`,
    nextRoundIn: (s) => `Nächste Runde in ${s} s`,
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
    soundState: (on) => (on ? "Ton: an" : "Ton: aus"),
    vibrationState: (on) => (on ? "Vibration: an" : "Vibration: aus"),
    settings: "Einstellungen",
    close: "Schließen",
    back: "Zurück",
    cardNames: { A: "Ass", T: "10", J: "Bube", Q: "Dame", K: "König" },
    suitNames: { S: "Pik", H: "Herz", D: "Karo", C: "Kreuz" },
    cardName: (rank, suit) => `${suit} ${rank}`,
    faceDown: "verdeckt",
    slotNames: { left: "linke", middle: "mittlere", right: "rechte" },
    // Under a card, on their own: "linke" needs its noun, so the labels are adverbs.
    slotLabels: { left: "links", middle: "Mitte", right: "rechts" },
    yourCard: (slot) => `Deine ${slot} Karte`,
    theirCard: (name, slot) => `${genitive(name)} ${slot} Karte`,
    timeLeft: (s) => (s === 1 ? "noch 1 Sekunde" : `noch ${s} Sekunden`),
    // Der Tisch, wie die Spieler ihm folgen (Issue 14).
    dealer: "Geber",
    dealerShort: "G",
    youMayCall: "Du darfst Crisp rufen",
    mayCall: (n) => `${n} darf Crisp rufen`,
    mayCallThenYou: (n) => `${n} darf Crisp rufen, dann bist du dran`,
    yourTurnDraw: "Du bist dran: Zieh eine Karte",
    turnDraw: (n) => `${n} ist dran: Karte ziehen`,
    turnPlay: (n) => `${n} ist dran: gezogene Karte spielen`,
    timeLeftLabel: "Restzeit für diesen Zug",
    extraMovesToPlay: (k) => (k === 1 ? "Letzter Extrazug" : `noch ${k} Extrazüge`),
    finalTurnsLeft: (name, k) => `${name} hat Crisp gerufen: ${k === 1 ? "noch 1 letzter Zug" : `noch ${k} letzte Züge`}`,
    queenPickTheirsFor: (slot) => `Dame: Deine ${slot} Karte ist gewählt. Wähle jetzt eine Karte eines Mitspielers`,
    picked: "gewählt",
    yourTotal: (n) => `Gesamt ${n}`,
    watchGame: "Spiel zuschauen",
    gameStartedLate: "Dieses Spiel läuft schon, niemand kann jetzt noch einsteigen. Schau zu: Plätze werden wieder frei, wenn der Raum zurück in den Warteraum geht.",
    roomFullLate: "Alle 8 Plätze sind besetzt. Schau zu: Ein Platz wird frei, wenn jemand vor dem Start geht.",
    player: "Spieler",
    cards: "Karten",
    crispBonus: "Crisp-Bonus",
    roundPoints: "Runde",
    roundShort: (k) => `R${k}`,
    callerAlone: (n) => `${n} hat Crisp gerufen und hatte allein die niedrigste Summe: −5.`,
    callerBeaten: (n, rivals, k) => `${n} hat Crisp gerufen, aber ${rivals} ${k === 1 ? "hatte" : "hatten"} weniger oder gleich viel: +5.`,
    deckVerifiedPlain: "Faires Spiel: Dein Browser hat geprüft, dass die Karten vor dem Austeilen feststanden und niemand sie verändert hat.",
    deckNotVerifiedPlain: "Die Prüfung ist fehlgeschlagen: Die ausgeteilten Karten passen nicht zum vorher festgelegten Stapel.",
    fairHow: "Wie?",
    queenOnYou: (n, mine, theirs) => `${n} hat deine ${mine} Karte gegen die eigene ${theirs} getauscht.`,
    queenByYou: (mine, n, theirs) => `Du hast deine ${mine} Karte gegen ${genitive(n)} ${theirs} Karte getauscht.`,
    // Computerspieler (Issue 17).
    playComputer: "Gegen den Computer spielen",
    playComputerHint: "Geht sofort los. Wenn du dran bist, kannst du um einen Tipp bitten.",
    computerPlayers: "Computerspieler",
    level: "Stufe",
    levels: { easy: "Leicht", normal: "Normal", hard: "Schwer" },
    playNow: "Jetzt spielen",
    botLabel: (level) => `Computerspieler, Stufe ${level.toLowerCase()}`,
    botLevelOf: (name) => `Stufe von ${name}`,
    addBot: "Computerspieler",
    addBotLabel: "Einen Computerspieler hinzufügen",
    newBotLevel: "Stufe des neuen Computerspielers",
    standIn: "Computer springt ein",
    standInHelp: "Ein Computerspieler übernimmt für alle, die gehen oder länger als diese Zeit weg sind.",
    playingFor: "spielt für",
    playingForShort: "für",
    playingForLabel: (name) => `Ein Computerspieler spielt für ${name}`,
    hint: "Tipp",
    hintLabel: "Tipp: Was würde ein starker Computerspieler tun?",
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
      botAdded: (n, level) => `🤖 ${n} (${level.toLowerCase()}) ist dazugekommen.`,
      botRemoved: (n) => `${n} wurde entfernt.`,
      botLevel: (n, level) => `${n} spielt jetzt auf Stufe ${level.toLowerCase()}.`,
      standIn: (n) => `🤖 Ein Computer spielt jetzt für ${n}.`,
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

/** A slot's name inside a sentence ("your left card" / "deine linke Karte"). */
export function slotName(slot) {
  return STRINGS[lang].slotNames[slot] ?? slot;
}

/** A computer player's level as players read it ("Hard" / "Schwer"). */
export function levelName(level) {
  return STRINGS[lang].levels[level] ?? level;
}

/** A slot's name standing alone, as a card's label ("left" / "links"). */
export function slotLabel(slot) {
  return STRINGS[lang].slotLabels[slot] ?? slot;
}

document.documentElement.lang = lang;
