// The names of the sounds played so far (see fake_audio.js), in order: the logged notes matched against
// the page's own table of sounds (effects.js SOUNDS), longest first; "?<Hz>" for a note of none of them.
async () => {
  const { SOUNDS } = await import("/js/effects.js");
  const names = Object.keys(SOUNDS).sort((a, b) => SOUNDS[b].length - SOUNDS[a].length);
  const notes = window.__notes;
  const played = [];
  let i = 0;
  while (i < notes.length) {
    const name = names.find((n) => SOUNDS[n].every((note, k) => notes[i + k] && Math.abs(notes[i + k].freq - note.freq) < 0.001));
    if (name) {
      played.push(name);
      i += SOUNDS[name].length;
    } else {
      played.push(`?${notes[i].freq}`);
      i += 1;
    }
  }
  return played;
}
