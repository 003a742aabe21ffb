// Plural forms as each language has them (Intl.PluralRules), for the catalogs in lang/.

/** The form of a text for the number `n` in `lang`: `plurals("fr")(n, { one: "…", other: "…" })` picks
 * `one` for 0 and 1 in French, for 1 only in English. A form the catalog does not give (Spanish and
 * Italian have `many` for a million) falls back to `other`. */
export function plurals(lang) {
  const rules = new Intl.PluralRules(lang);
  return (n, forms) => forms[rules.select(n)] ?? forms.other;
}
