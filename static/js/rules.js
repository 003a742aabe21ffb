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
          "Computer players can take seats: the host adds them in the lobby (easy, normal or hard), or you play against them alone from the start page. In a game against computer players only, the Hint button tells you what a strong computer player would do, and why.",
          "If the host chose a computer stand-in, a computer player plays for anyone who leaves or is away longer than that, until they come back.",
        ],
      ],
    ],
  },
  de: {
    title: "So wird gespielt",
    sections: [
      ["Das Ziel", ["Alle haben drei verdeckte Karten: links, Mitte, rechts. Die niedrigste Summe gewinnt. Crisp ist ein Spiel aus Gedächtnis und Bluff für 2 bis 8 Spieler mit einem Kartenspiel aus 52 Karten."]],
      ["Kartenwerte", ["Ass 1 Punkt, 2 bis 9 ihr Zahlenwert, 10, Bube, Dame und König je 10 Punkte.", "Ein Bube, eine Dame oder ein König zählt nur dann 10 Punkte, wenn die Karte schon eine deiner drei Karten ist."]],
      [
        "Beginn einer Runde",
        [
          "Jeder bekommt drei verdeckte Karten, in drei Durchgängen (ein Durchgang pro Platz). Deine linke und deine rechte Karte darfst du dir einmal ein paar Sekunden lang ansehen. Die mittlere bleibt unbekannt: Merk dir, was du gesehen hast!",
          "Der Spieler links vom Geber beginnt, gespielt wird im Uhrzeigersinn. Der Geber wandert jede Runde einen Platz weiter.",
        ],
      ],
      [
        "Dein Zug",
        [
          "Zieh die oberste Karte vom Nachziehstapel (nur du siehst sie). Hat der Gastgeber es erlaubt, darfst du stattdessen die oberste Karte vom Ablagestapel nehmen. Diese Karte musst du in deine Hand tauschen.",
          "Dann: Tausche sie gegen eine deiner Karten (die alte kommt offen auf den Ablagestapel), leg sie ab oder nutze ihre Wirkung als Sonderkarte.",
          "Einen Buben, eine Dame oder einen König vom Nachziehstapel darfst du nie in deine Hand tauschen.",
        ],
      ],
      [
        "Sonderkarten",
        [
          "Bube: Sieh dir einmal deine eigene mittlere Karte an.",
          "Dame: Tausche blind eine beliebige deiner Karten gegen eine beliebige Karte eines anderen Spielers. Landet die Karte, die du bekommst, links oder rechts, darfst du sie dir einmal ansehen, in der Mitte nicht. Dasselbe gilt für den anderen Spieler.",
          "König: Du musst ihn spielen und bekommst zwei Extrazüge; ein König in einem Extrazug bringt zwei weitere dazu.",
          "Ein Bube, eine Dame oder ein König vom Ablagestapel hat keine Wirkung: Die Karte zählt als normale Karte mit 10 Punkten.",
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
          "Jeder bekommt die Summe seiner Karten als Punkte. Wer Crisp gerufen hat, bekommt −5 Punkte, wenn seine Summe niedriger ist als die aller anderen, sonst +5 Punkte (Gleichstand reicht nicht).",
          "Die Punkte werden über die Runden addiert. Erreicht jemand die Punktegrenze (50, 100 oder 150 Punkte), endet das Spiel, und wer insgesamt die wenigsten Punkte hat, gewinnt.",
        ],
      ],
      [
        "Online spielen",
        [
          "Ist eine Zeit pro Zug eingestellt, gilt: Läuft sie ab, ist der Zug verloren; eine gezogene Karte wird ungenutzt abgelegt. Ist ein Spieler abwesend, läuft sein Zug nach 60 Sekunden ab.",
          "Jeder Kartenstapel wird auf dem Server gemischt und vor dem Austeilen mit einem Fingerabdruck festgeschrieben; nach der Runde prüft dein Browser, ob er unverändert geblieben ist.",
          "Computerspieler können mitspielen: Der Gastgeber fügt sie im Warteraum hinzu (leicht, normal oder schwer), oder du spielst auf der Startseite allein gegen sie. In einem Spiel nur gegen Computerspieler sagt dir der Tipp-Knopf, was ein starker Computerspieler tun würde, und warum.",
          "Hat der Gastgeber „Computer springt ein“ eingestellt, spielt ein Computerspieler für alle, die gehen oder länger als diese Zeit weg sind, bis sie zurückkommen.",
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
