// The status page: reads GET /v1/world, /v1/info and /v1/topology, follows GET /v1/events (server-sent
// events) and re-polls /v1/world as a fallback. Plain script, no libraries: nothing outside this rank
// is reached. Every value from the API goes into the page as text (textContent), never as markup.
"use strict";

(function () {
  const POLL_WORLD_MS = 3000;
  const POLL_INFO_MS = 10000;
  const EVENTS_KEPT = 50;
  // A rank only moves down this list (io.symmem.service.world.RankState); LEFT and GONE are final.
  const ORDER = { UNKNOWN: 0, JOINED: 1, READY: 2, LEFT: 3, GONE: 3 };

  const TOKEN_KEY = "symmem-token";
  // The API token, for this browser tab only (sessionStorage: gone with the tab, never sent elsewhere).
  let token = sessionStorage.getItem(TOKEN_KEY);
  let needsToken = false;    // a /v1 call answered 401
  let events = null;         // the EventSource while live
  let live = false;
  let lastProblem = null;
  const ranks = new Map();   // rank -> {rank, state, detail, at}
  const peers = new Map();   // rank -> PeerInfo from /v1/info

  const $ = (id) => document.getElementById(id);

  function el(tag, text, attrs) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        e.setAttribute(k, v);
      }
    }
    return e;
  }

  function bytes(n) {
    if (n === null || n === undefined) {
      return "–";
    }
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let v = Number(n);
    let u = 0;
    while (Math.abs(v) >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return (u === 0 ? v.toFixed(0) : v.toFixed(1)) + " " + units[u];
  }

  function when(at) {
    if (!at) {
      return "–";
    }
    const d = new Date(at);
    return isNaN(d.getTime()) ? String(at) : d.toLocaleTimeString();
  }

  class Unauthorized extends Error {}

  async function get(path) {
    const headers = { Accept: "application/json" };
    if (token) {
      headers.Authorization = "Bearer " + token;
    }
    const reply = await fetch(path, { headers: headers, cache: "no-store" });
    if (reply.status === 401) {
      throw new Unauthorized(path + " needs a bearer token");
    }
    const body = await reply.json().catch(() => null);
    if (!reply.ok) {
      const why = body && (body.detail || body.title || body.message);
      throw new Error(path + " answered " + reply.status + (why ? ": " + why : ""));
    }
    return body;
  }

  function askForToken(problem) {
    needsToken = true;
    token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    stopEvents();
    $("token-form").hidden = false;
    $("token-problem").textContent = problem || "";
    showConnection();
  }

  function showConnection() {
    let text;
    if (lastProblem) {
      text = "Problem: " + lastProblem;
    } else if (live) {
      text = "Live: following this rank's events, and polling every " + POLL_WORLD_MS / 1000 + " s.";
    } else if (needsToken && !token) {
      text = "Waiting for an API token.";
    } else {
      text = "Polling every " + POLL_WORLD_MS / 1000 + " s" + (token ? " (live events cannot send a token)." : ".");
    }
    $("connection").textContent = text;
    $("connection").className = lastProblem ? "problem" : "";
  }

  function fail(e) {
    if (e instanceof Unauthorized) {
      askForToken(token ? "The rank refused that token." : "");
      return;
    }
    lastProblem = e && e.message ? e.message : String(e);
    showConnection();
  }

  // --- the world: heading, ranks table, store ---------------------------------------------------

  function applyWorld(w) {
    $("world-size").textContent = w.worldSize;
    $("world-backend").textContent = w.backend;
    $("self-rank").textContent = w.rank;
    setSelfState(w.state, w.error);
    // The world is the authority: take its entries, except where an event already moved a rank further.
    for (const r of w.ranks || []) {
      const known = ranks.get(r.rank);
      if (!known || ORDER[r.state] >= ORDER[known.state] || !(known.state in ORDER)) {
        ranks.set(r.rank, r);
      }
    }
    renderRanks();
    renderStore(w.store);
  }

  function setSelfState(state, error) {
    const s = $("self-state");
    s.textContent = state + (error ? " (" + error + ")" : "");
    s.setAttribute("data-state", state);
  }

  function renderRanks() {
    const body = $("ranks").tBodies[0];
    const rows = [];
    const all = [...ranks.keys()].sort((a, b) => a - b);
    for (const n of all) {
      const r = ranks.get(n);
      const p = peers.get(n) || {};
      const tr = el("tr", null, { "data-rank": n, "data-state": r.state });
      tr.appendChild(el("th", n, { scope: "row" }));
      tr.appendChild(el("td", r.state, { class: "state" }));
      tr.appendChild(el("td", r.detail || "–"));
      tr.appendChild(el("td", when(r.at), r.at ? { title: r.at } : null));
      tr.appendChild(el("td", p.host || "–"));
      const port = el("td");
      if (p.httpPort && p.host) {
        const a = el("a", p.httpPort, { href: "http://" + (p.host.includes(":") ? "[" + p.host + "]" : p.host) + ":" + p.httpPort + "/" });
        port.appendChild(a);
      } else {
        port.textContent = "–";
      }
      tr.appendChild(port);
      tr.appendChild(el("td", p.pid || "–"));
      tr.appendChild(el("td", p.backend ? p.backend + (p.device >= 0 ? " #" + p.device : "") + (p.deviceName ? " " + p.deviceName : "") : "–"));
      rows.push(tr);
    }
    body.replaceChildren(...rows);
  }

  function figures(dl, items) {
    const out = [];
    for (const [name, value] of items) {
      out.push(el("dt", name));
      out.push(el("dd", value === null || value === undefined || value === "" ? "–" : value));
    }
    dl.replaceChildren(...out);
  }

  function renderStore(s) {
    if (!s) {
      figures($("store-figures"), [["Store", "not reached yet"]]);
      return;
    }
    const items = [["Address", s.address], ["Hosted by this rank", s.hosted ? "yes" : "no"]];
    if (s.hosted) {
      items.push(["Keys", s.keys]);
      items.push(["Open connections", s.connections !== undefined ? s.connections : s.clients]);
      items.push(["Pending waits", s.pendingWaits]);
    } else {
      items.push(["Figures", "shown by the rank that hosts the store, on its own page"]);
    }
    figures($("store-figures"), items);
  }

  // --- this rank: /v1/info ----------------------------------------------------------------------

  function applyInfo(i) {
    peers.clear();
    for (const p of i.peers || []) {
      peers.set(p.rank, p);
    }
    renderRanks();
    figures($("rank-figures"), [
      ["Rank", i.rank + " of " + i.worldSize],
      ["Local rank", i.localRank + " of " + i.localWorldSize],
      ["State", i.state + (i.error ? " (" + i.error + ")" : "")],
      ["Backend", i.backend],
      ["Device", i.device >= 0 ? i.device + (i.deviceName ? " (" + i.deviceName + ")" : "") : "none"],
      ["CUDA", (i.cudaBuilt ? "built with CUDA" : "built without CUDA") + ", " + i.cudaDevices + " device(s) seen"],
      ["Store", i.store],
      ["NVSHMEM", summary(i.nvshmem)],
      ["NCCL", summary(i.nccl)],
      ["Version", i.version],
    ]);
    renderPools(i.pools || []);
  }

  function summary(o) {
    if (o === null || o === undefined) {
      return "–";
    }
    if (typeof o !== "object") {
      return String(o);
    }
    return Object.entries(o).filter(([, v]) => v !== null && typeof v !== "object")
      .map(([k, v]) => k + ": " + v).join(", ") || "–";
  }

  function renderPools(pools) {
    const rows = pools.map((p) => {
      const tr = el("tr", null, { "data-group": p.group });
      tr.appendChild(el("th", p.group, { scope: "row" }));
      for (const v of [p.backend, bytes(p.reservedBytes), bytes(p.allocatedBytes), bytes(p.peakAllocatedBytes),
        bytes(p.freeBytes), bytes(p.largestFreeBytes), Number(p.fragmentation).toFixed(3), p.segments, p.liveBlocks]) {
        tr.appendChild(el("td", v));
      }
      return tr;
    });
    $("pools").tBodies[0].replaceChildren(...rows);
    $("pools").hidden = rows.length === 0;
    $("no-pools").hidden = rows.length !== 0;
  }

  // --- topology: /v1/topology -------------------------------------------------------------------

  function applyTopology(t) {
    const n = t.deviceCount || 0;
    if (n === 0) {
      $("topology-summary").textContent = "No GPU: this rank's process sees no CUDA device"
        + (t.cudaBuilt ? "." : " (symmem was built without CUDA).");
      $("devices").hidden = true;
      $("topology").hidden = true;
      return;
    }
    $("topology-summary").textContent = n + " GPU(s)" + (t.multicastDisabled ? "; multicast disabled." : ".");
    $("devices").tBodies[0].replaceChildren(...(t.devices || []).map((d) => {
      const tr = el("tr");
      tr.appendChild(el("th", "GPU " + d.index, { scope: "row" }));
      for (const v of [d.name, d.uuid, d.vmmSupported ? "yes" : "no", d.multicast]) {
        tr.appendChild(el("td", v));
      }
      return tr;
    }));
    const head = el("tr");
    head.appendChild(el("td"));
    for (let j = 0; j < n; j++) {
      head.appendChild(el("th", "GPU " + j, { scope: "col" }));
    }
    $("topology").tHead.replaceChildren(head);
    const rows = [];
    for (let i = 0; i < n; i++) {
      const tr = el("tr");
      tr.appendChild(el("th", "GPU " + i, { scope: "row" }));
      for (let j = 0; j < n; j++) {
        if (i === j) {
          tr.appendChild(el("td", "–", { class: "self" }));
          continue;
        }
        const p2p = t.canAccessPeer && t.canAccessPeer[i] ? t.canAccessPeer[i][j] : 0;
        const perf = t.performanceRank && t.performanceRank[i] ? t.performanceRank[i][j] : null;
        const atom = t.nativeAtomics && t.nativeAtomics[i] ? t.nativeAtomics[i][j] : 0;
        tr.appendChild(el("td", (p2p ? "P2P" : "no P2P") + (p2p ? ", rank " + perf : "") + (atom ? ", atomics" : ""),
          { class: p2p ? "p2p" : "no-p2p" }));
      }
      rows.push(tr);
    }
    $("topology").tBodies[0].replaceChildren(...rows);
    $("devices").hidden = false;
    $("topology").hidden = false;
  }

  // --- events: /v1/events -----------------------------------------------------------------------

  function applyEvent(e) {
    const next = {
      joined: "JOINED",
      ready: "READY",
      departed: e.orderly ? "LEFT" : "GONE",
    }[e.type];
    const at = e.at || new Date().toISOString();
    if (next) {
      move(e.rank, next, e.reason, at);
    } else if (e.type === "aborted") {
      for (const r of e.ranks || []) {
        move(r, "GONE", e.reason, at);
      }
    }
    renderRanks();
    logEvent(e);
    refreshSoon();
  }

  // After an event, the rest of the page (this rank's own state, the store's figures, the pools) is
  // read again: once for a burst of events.
  let refresh = null;
  function refreshSoon() {
    if (refresh === null) {
      refresh = setTimeout(() => {
        refresh = null;
        pollWorld();
        pollInfo();
      }, 250);
    }
  }

  function move(rank, state, detail, at) {
    const known = ranks.get(rank);
    if (known && (ORDER[known.state] >= ORDER[state])) {
      return; // a rank never moves back, and LEFT/GONE are final
    }
    ranks.set(rank, { rank: rank, state: state, detail: detail || null, at: at });
  }

  function logEvent(e) {
    const list = $("events");
    const words = e.type === "aborted"
      ? "this rank aborted its world" + (e.ranks && e.ranks.length ? " (ranks gone: " + e.ranks.join(", ") + ")" : "")
      : "rank " + e.rank + " " + (e.type === "departed" ? (e.orderly ? "left" : "is gone") : e.type);
    const li = el("li", when(e.at) + " — " + words + (e.reason ? ": " + e.reason : ""),
      { "data-seq": e.seq, "data-type": e.type, "data-rank": e.rank, value: e.seq });
    list.insertBefore(li, list.firstChild);
    while (list.children.length > EVENTS_KEPT) {
      list.removeChild(list.lastChild);
    }
  }

  function startEvents() {
    if (events || needsToken || token || typeof EventSource === "undefined") {
      return;
    }
    events = new EventSource("v1/events");
    const on = (msg) => {
      try {
        applyEvent(JSON.parse(msg.data));
      } catch (err) {
        // not an event of ours; the next poll shows the world as it is
      }
    };
    for (const type of ["joined", "ready", "departed", "aborted"]) {
      events.addEventListener(type, on);
    }
    events.onopen = () => {
      live = true;
      showConnection();
    };
    // EventSource reconnects by itself (sending Last-Event-ID); until then the poll below carries on.
    events.onerror = () => {
      live = false;
      showConnection();
    };
  }

  function stopEvents() {
    if (events) {
      events.close();
      events = null;
    }
    live = false;
  }

  // --- polling ----------------------------------------------------------------------------------

  async function pollWorld() {
    try {
      applyWorld(await get("v1/world"));
      lastProblem = null;
      showConnection();
    } catch (e) {
      fail(e);
    }
  }

  async function pollInfo() {
    try {
      applyInfo(await get("v1/info"));
    } catch (e) {
      fail(e);
    }
  }

  async function loadTopology() {
    try {
      applyTopology(await get("v1/topology"));
    } catch (e) {
      if (e instanceof Unauthorized) {
        fail(e);
      } else {
        $("topology-summary").textContent = "Topology not available: " + e.message;
      }
    }
  }

  async function start() {
    await pollWorld();
    if (!needsToken) {
      startEvents();
    }
    await pollInfo();
    await loadTopology();
  }

  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token-input").value.trim() || null;
    $("token-input").value = "";
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
    }
    needsToken = false;
    $("token-form").hidden = true;
    $("token-problem").textContent = "";
    // With a token, events cannot follow (EventSource sends no headers): polling carries the page.
    start();
  });

  setInterval(() => {
    if (!needsToken) {
      pollWorld();
    }
  }, POLL_WORLD_MS);
  setInterval(() => {
    if (!needsToken) {
      pollInfo();
    }
  }, POLL_INFO_MS);
  start();
})();
