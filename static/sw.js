// The service worker that lets Crisp open like an installed app: it keeps the client's files (the shell)
// and shows the offline page when the server cannot be reached. The game itself lives on the server, so
// nothing else is cached: the socket, the API, the records, /healthz and /metrics always go to the network.
//
// SHELL is written before this file by the server (crisp_server/web/assets.py): the content-hashed paths
// the page loads, the offline page's, and a version drawn from them and from this file.

const CACHE = `crisp-shell-${SHELL.version}`;
const FILES = new Set(SHELL.files);
// Never answered by the worker, not even when they are a navigation (a record opened in a tab).
const NETWORK_ONLY = [/^\/api\//, /^\/ws(\/|$)/, /^\/healthz$/, /^\/metrics$/];

self.addEventListener("install", (event) => {
  // The hashed files never change under their name: the browser's HTTP cache may hand them over.
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL.files))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  // Taking over at once is safe: a page loads all its modules when it starts (each is preloaded, none is
  // imported later), so a page of the last deploy asks for nothing the deleted cache held.
  event.waitUntil(
    (async () => {
      const names = await caches.keys();
      const old = names.filter((name) => name.startsWith("crisp-shell-") && name !== CACHE);
      await Promise.all(old.map((name) => caches.delete(name)));
      // The navigation's request starts while the worker wakes up, instead of after.
      if (self.registration.navigationPreload) await self.registration.navigationPreload.enable();
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (NETWORK_ONLY.some((pattern) => pattern.test(url.pathname))) return;
  if (request.mode === "navigate") {
    event.respondWith(page(event));
  } else if (FILES.has(url.pathname)) {
    event.respondWith(shellFile(request));
  }
  // Anything else (a file by its own path, the manifest's icons) is not the worker's business.
});

/** The network first (the page is always revalidated); the offline page when the server cannot be reached. */
async function page(event) {
  try {
    const preloaded = await event.preloadResponse;
    return preloaded || (await fetch(event.request));
  } catch {
    const offline = await caches.match(SHELL.offline, { cacheName: CACHE });
    return offline || Response.error();
  }
}

/** The cache first: a hashed path's content never changes. Fetched (and kept) if the cache lost it. */
async function shellFile(request) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request);
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
}
