// What a language's catalog lacks or gets wrong, measured against English's (lang/en.js): every key of it,
// recursively (ev, cardNames, rules' sections and paragraphs ...), no other key; every text a non-empty
// string that is no placeholder; every function taking as many values as English's and giving a non-empty
// text for each set of sample values that English's takes.
async (code) => {
  const en = (await import("/js/lang/en.js")).default;
  const other = (await import(`/js/lang/${code}.js`)).default;
  const problems = [];
  // A whole text that is a placeholder in any case; marks and leaked values as written (case-sensitive, so
  // that "maintenant" or "Todo" are words, not NaN or TODO).
  const STUB = /^(todo|tbd|fixme|xxx|tr|translate|\.\.\.|…|-|\?)$/i;
  const LEAK = /\b(TODO|FIXME|TBD)\b|undefined|\bNaN\b|\[object |\$\{|\{\d\}|^\s|\s$/;
  const PLACEHOLDER = { test: (value) => STUB.test(value) || LEAK.test(value) };
  // Values as the client hands them on: names, numbers (plural forms: 0, 1, 2, 5, 21, 1.5 hours), switches.
  const names = ["Ana", "Ben", "Cem", "Dana"];
  const samples = [
    names,
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [2, 2, 2, 2],
    [5, 5, 5, 5],
    [21, 21, 21, 21],
    [1.5, 1.5, 1.5, 1.5],
    [true, true, true, true],
    [false, false, false, false],
    ["Ana", 3, "Ben", 2],
    [3, "Ana", 2, "Ben"],
    // The lesson's texts take the computer players' names as one value ({a, b}: seats 1 and 2).
    [{ a: "Ana", b: "Ben" }, 2, 3, 4],
  ];
  const text = (path, value, key) => {
    if (typeof value !== "string") problems.push(`${path}: ${typeof value}, not a text`);
    else if (!value.trim()) problems.push(`${path}: empty`);
    else if (PLACEHOLDER.test(value)) problems.push(`${path}: a placeholder (${JSON.stringify(value)})`);
    else if (code !== "en" && key && value === key && value !== en[key]) problems.push(`${path}: its own key`);
  };
  const walk = (mine, theirs, path, key) => {
    if (typeof mine === "function") {
      if (typeof theirs !== "function") return problems.push(`${path}: not a function`);
      if (theirs.length !== mine.length) problems.push(`${path}: takes ${theirs.length} values, English's ${mine.length}`);
      let tried = 0;
      for (const sample of samples) {
        const args = sample.slice(0, mine.length);
        try {
          const english = mine(...args);
          // Values English's does not take (a name where it counts), or makes no sense of ("NaN minutes").
          if (typeof english !== "string" || !english.trim() || PLACEHOLDER.test(english)) continue;
        } catch {
          continue;
        }
        tried += 1;
        let out;
        try {
          out = theirs(...args);
        } catch (e) {
          problems.push(`${path}(${args.join(", ")}): throws ${e}`);
          continue;
        }
        text(`${path}(${args.join(", ")})`, out, null);
      }
      if (!tried) problems.push(`${path}: no sample values fit English's`);
      return;
    }
    if (Array.isArray(mine)) {
      if (!Array.isArray(theirs)) return problems.push(`${path}: not a list`);
      if (theirs.length !== mine.length) problems.push(`${path}: ${theirs.length} items, English's ${mine.length}`);
      mine.forEach((item, i) => i < theirs.length && walk(item, theirs[i], `${path}[${i}]`, null));
      return;
    }
    if (mine && typeof mine === "object") {
      if (!theirs || typeof theirs !== "object" || Array.isArray(theirs)) return problems.push(`${path}: not an object`);
      for (const k of Object.keys(mine)) {
        if (!Object.hasOwn(theirs, k)) problems.push(`${path}.${k}: missing`);
        else walk(mine[k], theirs[k], `${path}.${k}`, k);
      }
      for (const k of Object.keys(theirs)) if (!Object.hasOwn(mine, k)) problems.push(`${path}.${k}: not in English's`);
      return;
    }
    text(path, theirs, key);
  };
  walk(en, other, code, null);
  return problems;
}
