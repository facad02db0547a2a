// The rank status page: reads /v1/world, /v1/info and /v1/topology, then follows /v1/events (server-sent
// events) and re-reads /v1/world every few seconds in case the stream is down. Plain DOM, no framework.
"use strict";
(function () {
  const POLL_MS = 3000;
  let token = sessionStorage.getItem("symmem-token") || "";
  let source = null;
  let info = null;

  function headers() {
    return token ? { Authorization: "Bearer " + token } : {};
  }

  async function get(path) {
    const reply = await fetch(path, { headers: headers() });
    if (reply.status === 401) {
      askForToken();
      throw new Error("401");
    }
    if (!reply.ok) {
      throw new Error(path + " answered " + reply.status);
    }
    return reply.json();
  }

  function askForToken() {
    const form = document.getElementById("token-form");
    form.hidden = false;
    form.onsubmit = (e) => {
      e.preventDefault();
      token = document.getElementById("token").value.trim();
      sessionStorage.setItem("symmem-token", token);
      form.hidden = true;
      refresh();
    };
  }

  function text(parent, tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value === null || value === undefined ? "" : String(value);
    if (cls) {
      el.className = cls;
    }
    parent.appendChild(el);
    return el;
  }

  function bytes(n) {
    if (n === null || n === undefined) {
      return "";
    }
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  function renderWorld(world) {
    document.getElementById("title").textContent = "symmem rank " + world.rank + " of " + world.worldSize;
    document.getElementById("summary").textContent = "world of " + world.worldSize + " ranks, backend " + world.backend
        + ", this rank " + world.state + (world.error ? ": " + world.error : "");
    const body = document.querySelector("#ranks tbody");
    body.textContent = "";
    const peers = {};
    (info && info.peers ? info.peers : []).forEach((p) => { peers[p.rank] = p; });
    world.ranks.forEach((r) => {
      const row = document.createElement("tr");
      row.dataset.rank = r.rank;
      row.dataset.state = r.state;
      text(row, "td", r.rank);
      text(row, "td", r.state, "state state-" + r.state);
      text(row, "td", r.detail);
      text(row, "td", r.at ? new Date(r.at).toLocaleTimeString() : "");
      const p = peers[r.rank];
      text(row, "td", p ? p.host : "");
      text(row, "td", p ? (p.deviceName || "") + (p.device >= 0 ? " #" + p.device : "") : "");
      text(row, "td", p ? p.httpPort : "");
      body.appendChild(row);
    });
    const store = document.getElementById("store");
    store.textContent = "";
    const s = world.store || {};
    [["address", s.address], ["hosted by this rank", s.hosted ? "yes" : "no"], ["keys", s.keys],
      ["connections", s.connections], ["pending waits", s.pendingWaits]].forEach(([k, v]) => {
      if (v !== undefined && v !== null) {
        text(store, "dt", k);
        text(store, "dd", v);
      }
    });
  }

  function renderPools() {
    const body = document.querySelector("#pools tbody");
    body.textContent = "";
    const pools = info && info.pools ? info.pools : [];
    if (pools.length === 0) {
      const row = document.createElement("tr");
      text(row, "td", "no memory pool on this rank", "muted").colSpan = 5;
      body.appendChild(row);
    }
    pools.forEach((p) => {
      const row = document.createElement("tr");
      text(row, "td", p.group);
      text(row, "td", p.segments);
      text(row, "td", bytes(p.reservedBytes));
      text(row, "td", bytes(p.allocatedBytes));
      text(row, "td", p.liveBlocks);
      body.appendChild(row);
    });
  }

  function renderTopology(t) {
    const summary = document.getElementById("topology-summary");
    const head = document.querySelector("#topology thead");
    const body = document.querySelector("#topology tbody");
    head.textContent = "";
    body.textContent = "";
    if (!t.deviceCount) {
      summary.textContent = "No GPU in this rank's process" + (t.cudaBuilt ? "." : " (libsymmem built without CUDA).");
      return;
    }
    summary.textContent = t.deviceCount + " GPU(s); peer access (performance rank) between them"
        + (t.multicastDisabled ? "; NVLink multicast disabled" : "") + ".";
    const hr = document.createElement("tr");
    text(hr, "th", "");
    t.devices.forEach((d, i) => text(hr, "th", i + ": " + d.name));
    head.appendChild(hr);
    t.devices.forEach((d, i) => {
      const row = document.createElement("tr");
      text(row, "th", i + ": " + d.name);
      t.devices.forEach((_, j) => text(row, "td", i === j ? "-"
          : (t.canAccessPeer[i][j] ? "P2P" : "no") + " (" + t.performanceRank[i][j] + ")"));
      body.appendChild(row);
    });
  }

  function addEvent(e) {
    const list = document.getElementById("events");
    const item = document.createElement("li");
    item.dataset.type = e.type;
    item.textContent = (e.at ? new Date(e.at).toLocaleTimeString() + " " : "") + e.type + " rank " + e.rank
        + (e.ranks ? " " + JSON.stringify(e.ranks) : "") + (e.orderly === false ? " (not in order)" : "")
        + (e.reason ? ": " + e.reason : "");
    list.insertBefore(item, list.firstChild);
  }

  async function refresh() {
    try {
      info = await get("/v1/info");
      renderWorld(await get("/v1/world"));
      renderPools();
      document.getElementById("connection").textContent = "updated " + new Date().toLocaleTimeString();
    } catch (e) {
      document.getElementById("connection").textContent = "cannot reach this rank's API: " + e.message;
    }
  }

  function follow() {
    // EventSource sends no Authorization header: with a token the page relies on polling alone.
    if (token || !window.EventSource || source) {
      return;
    }
    source = new EventSource("/v1/events");
    ["joined", "ready", "departed", "aborted"].forEach((type) => source.addEventListener(type, (m) => {
      addEvent(JSON.parse(m.data));
      refresh();
    }));
  }

  async function start() {
    await refresh();
    try {
      renderTopology(await get("/v1/topology"));
    } catch (e) {
      document.getElementById("topology-summary").textContent = "topology not available: " + e.message;
    }
    follow();
    setInterval(refresh, POLL_MS);
  }

  start();
})();
