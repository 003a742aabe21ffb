// The finished games this device played, newest first, with the seat token that opens their replays: a
// room's seat token (kept in net.js while the seat is held) is forgotten when the room closes, but its games'
// replays stay readable. {id, room, players, seat, token, ended_at}, at most MAX_GAMES.

const GAMES_KEY = "crisp.games";
const MAX_GAMES = 20;

function readGames() {
  try {
    const games = JSON.parse(localStorage.getItem(GAMES_KEY) || "[]");
    return Array.isArray(games) ? games.filter((g) => g && typeof g.id === "string" && typeof g.token === "string") : [];
  } catch {
    return []; // no storage, or something else stored there
  }
}

/** Every game kept, newest first. */
export function recentGames() {
  return readGames();
}

/** The game `id` as kept, or null. */
export function gameFor(id) {
  return readGames().find((g) => g.id === id) ?? null;
}

/** Keep the games of `list` (a room's games, as `/api/rooms/{code}/games` lists them) that the player
 * `name` of seat `token` played in `room`; a game kept already keeps its place. */
export function rememberGames(room, list, name, token) {
  if (!name || !token) return;
  const kept = readGames();
  const known = new Set(kept.map((g) => g.id));
  const fresh = list
    .filter((g) => !known.has(g.id) && g.players.includes(name))
    .map((g) => ({ id: g.id, room, players: g.players, seat: g.players.indexOf(name), token, ended_at: g.finished_at ?? null }));
  if (!fresh.length) return;
  const games = [...fresh, ...kept].sort((a, b) => String(b.ended_at ?? "").localeCompare(String(a.ended_at ?? "")));
  try {
    localStorage.setItem(GAMES_KEY, JSON.stringify(games.slice(0, MAX_GAMES)));
  } catch {
    /* private mode: nothing kept */
  }
}
