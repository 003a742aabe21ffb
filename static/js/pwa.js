// Registers the service worker (/sw.js) that keeps the client's files and shows an offline page when the
// server cannot be reached. Browsers allow one only in a secure context (https, or localhost); elsewhere,
// and if registering fails, the client works as before, from the network.

function register() {
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // no worker: nothing is lost but the offline page
  });
}

if (window.isSecureContext && "serviceWorker" in navigator) {
  // After the load, so that the worker's precaching never competes with the page's own requests.
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}
