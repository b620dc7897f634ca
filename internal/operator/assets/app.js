// coagent8 operator dashboard: live updates over server-sent events and
// form actions through fetch. No third-party code; served from this
// binary under a CSP that allows only same-origin scripts.
"use strict";

(function () {
  const csrf = () => document.querySelector('meta[name="csrf"]').content;
  const live = () => document.getElementById("live");

  // swap replaces <main> with the main content of html (a fragment the
  // server rendered and escaped). DOMParser never runs scripts, and the
  // CSP forbids inline ones in any case.
  function swap(html) {
    const doc = new DOMParser().parseFromString("<main>" + html + "</main>", "text/html");
    document.getElementById("main").replaceChildren(...doc.querySelector("main").childNodes);
  }

  async function reload() {
    const r = await fetch(location.pathname + location.search, {
      headers: { "X-Coagent8-Fragment": "1" },
      credentials: "same-origin",
      cache: "no-store",
    });
    const html = await r.text();
    // An action answered while this update was in flight: keep its result.
    if (r.ok && !showingResult) swap(html);
  }

  // Forms marked data-action post through fetch: the page's
  // Referrer-Policy is no-referrer, under which a browser sends
  // "Origin: null" on a plain form post; a same-origin referrer policy on
  // this one request lets it carry its real Origin, which the server
  // requires together with the CSRF token.
  document.addEventListener("submit", async (ev) => {
    const form = ev.target;
    if (!form.matches("form[data-action]")) return;
    ev.preventDefault();
    const r = await fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "X-CSRF-Token": csrf(), "X-Coagent8-Fragment": "1" },
      credentials: "same-origin",
      referrerPolicy: "same-origin",
    });
    swap(await r.text());
    // The page now shows the action's result, not location's page: a
    // live update would replace the result with the page it came from.
    showingResult = true;
  });

  let pending = false, showingResult = false;
  function connect() {
    const es = new EventSource("/live");
    es.addEventListener("hello", () => { live().textContent = "live"; live().className = "live on"; });
    es.addEventListener("change", async () => {
      if (pending || showingResult) return;
      pending = true;
      try { await reload(); live().textContent = "live · updated " + new Date().toLocaleTimeString(); }
      finally { pending = false; }
    });
    es.onerror = () => { live().textContent = "reconnecting…"; live().className = "live off"; };
  }
  document.addEventListener("DOMContentLoaded", connect);
})();
