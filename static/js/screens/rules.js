// The rules screen: the rules text (rules.js) with a way back to where the player came from.

import { h } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { rulesSection } from "../rules.js";
import { closeRules, langPicker } from "../ui.js";

export function rulesScreen() {
  return h(
    "section",
    { class: "screen rules" },
    h(
      "div",
      { class: "bar" },
      h(
        "button",
        {
          class: "link",
          "data-key": "back",
          onclick: () => closeRules(),
        },
        `← ${t("back")}`,
      ),
      langPicker(),
    ),
    rulesSection(getLang()),
  );
}
