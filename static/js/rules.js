// "How to play": the rules the server enforces, in the player's language (the catalogs' `rules`).

import { h } from "./dom.js";
import { rulesText } from "./i18n.js";

function sectionId(index) {
  const title = rulesText("en").sections[index]?.[0] ?? String(index);
  return `rules-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
}

export function rulesSection(lang) {
  const rules = rulesText(lang);
  return h(
    "article",
    { class: "rules-text", lang },
    h("h1", {}, rules.title),
    // Sections are named after the English titles in every language ("rules-online"), for links into them.
    rules.sections.map(([title, paragraphs], i) =>
      h("section", { id: sectionId(i) }, h("h2", {}, title), paragraphs.map((p) => h("p", {}, p))),
    ),
  );
}
