// "How to play" / "So wird gespielt": the rules the server enforces, in both languages.

import { h } from "./dom.js";

const RULES = {
  en: {
    title: "How to play",
    sections: [
      ["The goal", ["Everyone has three face-down cards: left, middle, right. The lowest sum wins. Crisp is a game of memory and bluff for 2 to 8 players with one deck of 52 cards."]],
      ["Card values", ["Ace 1, 2 to 9 their number, 10, Jack, Queen and King 10.", "A Jack, Queen or King only counts 10 once it is one of your three cards."]],
      [
        "Start of a round",
        [
          "Three cards are dealt to everyone, one pass for each slot. You may look at your left and right card once, for a few seconds. The middle card stays unknown: remember what you saw!",
          "The player left of the dealer begins; play goes clockwise. The dealer moves one seat on each round.",
        ],
      ],
      [
        "Your turn",
        [
          "Draw the top card of the draw pile (only you see it). If the host allowed it, you may take the top card of the discard pile instead: it must be swapped into your hand.",
          "Then: swap it for one of your cards (the old card goes face up onto the discard pile), discard it, or play its special effect.",
          "A Jack, Queen or King from the draw pile can never go into your hand.",
        ],
      ],
      [
        "Special cards",
        [
          "Jack: look once at your own middle card.",
          "Queen: swap any one of your cards with any card of another player, blind. If the card you get lands left or right, you see it once; in the middle, you don't. The same for the other player.",
          "King: must be played. You get two extra moves; a King in an extra move adds two more.",
          "A Jack, Queen or King taken from the discard pile has no effect: it is a plain 10.",
        ],
      ],
      [
        "Calling Crisp",
        [
          "Right after your turn you have 3 seconds to call Crisp, if you think your sum is the lowest. The next player may draw after 2 seconds.",
          "Everyone else then has one final turn. Then all cards are turned up.",
        ],
      ],
      [
        "Scoring",
        [
          "Everyone scores the sum of their cards. The caller gets −5 if their sum is lower than everyone else's, otherwise +5 (a tie is not enough).",
          "Scores add up over the rounds. When someone reaches the score limit (50, 100 or 150), the game ends and the lowest total wins.",
        ],
      ],
      [
        "Online",
        [
          "With a turn timer, a move that runs out of time is lost: a card you hold is discarded unused. A player who is away has their move timed out after 60 seconds.",
          "Every deck is shuffled on the server and locked with a fingerprint before the deal; after the round your browser checks that the deck was not changed.",
        ],
      ],
    ],
  },
  de: {
    title: "So wird gespielt",
    sections: [
      ["Das Ziel", ["Alle haben drei verdeckte Karten: links, Mitte, rechts. Die niedrigste Summe gewinnt. Crisp ist ein Spiel aus Gedächtnis und Bluff für 2 bis 8 Spieler mit einem Kartenspiel zu 52 Karten."]],
      ["Kartenwerte", ["Ass 1, 2 bis 9 ihr Zahlenwert, 10, Bube, Dame und König 10.", "Bube, Dame oder König zählen nur dann 10, wenn die Karte eine deiner drei Karten ist."]],
      [
        "Beginn einer Runde",
        [
          "Jeder bekommt drei Karten, ein Durchgang pro Platz. Deine linke und rechte Karte darfst du dir einmal ein paar Sekunden ansehen. Die mittlere bleibt unbekannt: merk dir, was du gesehen hast!",
          "Der Spieler links vom Geber beginnt, gespielt wird im Uhrzeigersinn. Der Geber wandert jede Runde einen Platz weiter.",
        ],
      ],
      [
        "Dein Zug",
        [
          "Zieh die oberste Karte vom Nachziehstapel (nur du siehst sie). Hat der Gastgeber es erlaubt, darfst du stattdessen die oberste Karte vom Ablagestapel nehmen: Sie muss in deine Hand getauscht werden.",
          "Dann: Tausche sie gegen eine deiner Karten (die alte kommt offen auf den Ablagestapel), leg sie ab oder spiel ihre Sonderwirkung.",
          "Bube, Dame oder König vom Nachziehstapel dürfen nie in deine Hand.",
        ],
      ],
      [
        "Sonderkarten",
        [
          "Bube: Sieh dir einmal deine eigene mittlere Karte an.",
          "Dame: Tausche blind eine deiner Karten gegen eine Karte eines anderen Spielers. Landet deine neue Karte links oder rechts, siehst du sie einmal an, in der Mitte nicht. Dasselbe gilt für den anderen.",
          "König: muss gespielt werden. Du bekommst zwei Extrazüge; ein König in einem Extrazug bringt zwei weitere.",
          "Bube, Dame oder König vom Ablagestapel haben keine Wirkung: Sie zählen einfach 10.",
        ],
      ],
      [
        "Crisp rufen",
        [
          "Direkt nach deinem Zug hast du 3 Sekunden, um Crisp zu rufen, wenn du glaubst, dass deine Summe die niedrigste ist. Der nächste Spieler darf nach 2 Sekunden ziehen.",
          "Alle anderen haben dann noch einen letzten Zug. Danach werden alle Karten aufgedeckt.",
        ],
      ],
      [
        "Wertung",
        [
          "Jeder bekommt die Summe seiner Karten. Wer Crisp gerufen hat, bekommt −5, wenn seine Summe niedriger ist als die aller anderen, sonst +5 (Gleichstand reicht nicht).",
          "Die Punkte werden über die Runden addiert. Erreicht jemand die Punktegrenze (50, 100 oder 150), endet das Spiel, und die niedrigste Summe gewinnt.",
        ],
      ],
      [
        "Online",
        [
          "Mit Zugzeit gilt: Läuft die Zeit ab, ist der Zug verloren; eine gehaltene Karte wird ungenutzt abgelegt. Ist ein Spieler weg, läuft sein Zug nach 60 Sekunden ab.",
          "Jeder Stapel wird auf dem Server gemischt und vor dem Austeilen mit einem Fingerabdruck festgelegt; nach der Runde prüft dein Browser, dass er nicht verändert wurde.",
        ],
      ],
    ],
  },
};

function sectionId(index) {
  const title = RULES.en.sections[index]?.[0] ?? String(index);
  return `rules-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
}

export function rulesSection(lang) {
  const rules = RULES[lang] ?? RULES.en;
  return h(
    "article",
    { class: "rules-text", lang },
    h("h1", {}, rules.title),
    // Sections are named after the English titles in both languages ("rules-online"), for links into them.
    rules.sections.map(([title, paragraphs], i) =>
      h("section", { id: sectionId(i) }, h("h2", {}, title), paragraphs.map((p) => h("p", {}, p))),
    ),
  );
}
