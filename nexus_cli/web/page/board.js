// The nexus web board. It draws the state the server streams (server-sent events) and posts
// the person's answers. Every text that came from a peer is set as text (textContent, text
// nodes): this file never writes markup from data, and it loads nothing from anywhere else.
"use strict";

const TOKEN = document.querySelector("meta[name=nexus-token]").content;
const NONCE = document.querySelector("meta[name=nexus-nonce]").content;
const SVG = "http://www.w3.org/2000/svg";
let current = null;

// -- building the document ------------------------------------------------------------------

function h(tag, props, ...children) {
  const node = document.createElement(tag);
  return fill(node, props, children);
}

function s(tag, props, ...children) {
  const node = document.createElementNS(SVG, tag);
  return fill(node, props, children);
}

function fill(node, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number"
      ? document.createTextNode(String(child)) : child);
  }
  return node;
}

function token(word) {  // a status or kind as a class name: letters, digits and dashes only
  return String(word || "").toLowerCase().replace(/[^a-z0-9-]/g, "-");
}

function $(id) { return document.getElementById(id); }

function ago(epoch) {
  if (!epoch) return "";
  const sec = Math.max(0, Date.now() / 1000 - epoch);
  if (sec < 60) return `${Math.round(sec)} s ago`;
  if (sec < 3600) return `${Math.round(sec / 60)} min ago`;
  if (sec < 86400) return `${Math.round(sec / 3600)} h ago`;
  return `${Math.round(sec / 86400)} d ago`;
}

function clock(epoch) {
  return new Date(epoch * 1000).toLocaleTimeString([], {hour12: false});
}

function short(text, n) {
  text = String(text || "");
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

function show(node, yes) { node.hidden = !yes; }

// -- the sections ---------------------------------------------------------------------------

function render(st) {
  current = st;
  show($("error"), Boolean(st.error));
  $("error").textContent = st.error ? `the store cannot be read: ${st.error}` : "";
  const n = st.sessions.length;
  $("scope").textContent = st.error ? "" :
    `${n} session${n === 1 ? "" : "s"} in ${st.where}`;
  document.title = `nexus board (${n})`;
  sessions(st);
  graph(st);
  deadlocks(st);
  approvals(st);
  targets(st);
  reservations(st);
  activity(st);
}

function sessions(st) {
  document.body.classList.toggle("team", Boolean(st.team));
  $("sessions-count").textContent = st.sessions.length ? `(${st.sessions.length})` : "";
  show($("sessions-empty"), !st.sessions.length && !st.error);
  $("sessions").tBodies[0].replaceChildren(...st.sessions.map(x => h("tr",
    {class: x.self ? "self" : null, "data-id": x.id},
    h("td", {"data-label": "session"},
      h("span", {class: "name", text: x.name || x.id}),
      h("span", {class: "handle", text: x.handle}),
      x.self ? null : h("button", {type: "button", class: "small", title: `message ${x.name}`,
        "aria-label": `message ${x.name}`, on: {click: () => pick(x.id)}}, "✉"),
      x.title ? h("span", {class: "title", text: x.title}) : null),
    h("td", {"data-label": "client", class: "tight", text: x.client}),
    h("td", {"data-label": "status", class: "tight"}, h("span",
      {class: `badge st-${token(x.status)}`, text: x.status, title: x.status_reason || null})),
    h("td", {"data-label": "doing", class: "tight", text: x.doing}),
    h("td", {"data-label": "inbox", class: x.unread ? "num tight hot" : "num tight",
      text: x.unread}),
    h("td", {"data-label": "tasks", class: "num tight", title: "owns / waits on",
      text: `${x.owns}/${x.waits_on}`}),
    h("td", {"data-label": "last answer"}, h("span", {class: "answer", text: x.answer || "–"})),
    h("td", {"data-label": "machine", class: "machine", text: x.machine || "–"}))));
}

function graph(st) {
  const box = $("graph");
  const w = st.waits || {nodes: [], edges: [], deadlocks: []};
  const width = Math.max(300, Math.min(box.clientWidth || 640, 900));
  const nodes = w.nodes;
  const listeners = nodes.filter(n => n.listening);
  const narrow = width < 560;
  const height = nodes.length > 2 ? Math.min(440, Math.max(280, width * (narrow ? 0.9 : 0.55)))
    : 170;
  const cx = width / 2, cy = height / 2 - 6;
  const rx = width / 2 - (narrow ? 64 : 90), ry = height / 2 - 52;  // room for the labels
  const at = {};
  nodes.forEach((n, i) => {
    if (nodes.length === 1) at[n.id] = [listeners.length ? cx - Math.min(160, width / 3) : cx, cy];
    else {  // on an ellipse; two side by side
      const a = (nodes.length === 2 ? Math.PI : -Math.PI / 2) + (2 * Math.PI * i) / nodes.length;
      at[n.id] = [cx + rx * Math.cos(a), cy + ry * Math.sin(a)];
    }
  });
  const dead = new Set(), inCycle = new Set();
  for (const d of w.deadlocks) {
    for (let i = 0; i + 1 < d.cycle.length; i++) dead.add(`${d.cycle[i]}>${d.cycle[i + 1]}`);
    d.cycle.forEach(id => inCycle.add(id));
  }
  const pairs = new Set(w.edges.map(e => `${e.from.id}>${e.to.id}`));
  const svg = s("svg", {viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": "the wait graph"},
    s("defs", {}, marker("arrow", "edge"), marker("arrow-dead", "edge dead")));
  if (!nodes.length) {
    svg.append(s("text", {x: cx, y: cy, class: "none", "text-anchor": "middle"},
      "no sessions"));
  }
  const R = 24;
  const edge = (a, b, cls, bend) => {
    const [x1, y1] = a, [x2, y2] = b;
    const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy) || 1;
    const ux = dx / len, uy = dy / len;
    const mx = (x1 + x2) / 2 - uy * bend, my = (y1 + y2) / 2 + ux * bend;
    const sx = x1 + ux * R, sy = y1 + uy * R, ex = x2 - ux * (R + 4), ey = y2 - uy * (R + 4);
    return s("path", {d: `M${sx},${sy} Q${mx},${my} ${ex},${ey}`, class: cls,
      "marker-end": `url(#${cls.includes("dead") ? "arrow-dead" : "arrow"})`});
  };
  if (listeners.length) {
    const any = nodes.length === 1 ? [cx + Math.min(160, width / 3), cy] : [cx, cy];
    svg.append(s("g", {class: "anyone"}, s("rect", {x: any[0] - 44, y: any[1] - 14, width: 88,
      height: 28, rx: 14}), s("text", {x: any[0], y: any[1] + 4, "text-anchor": "middle"},
      "any message")));
    for (const n of listeners) {
      const p = at[n.id], d = Math.hypot(any[0] - p[0], any[1] - p[1]) || 1;
      const stop = [any[0] - (any[0] - p[0]) / d * 24, any[1] - (any[1] - p[1]) / d * 14];
      svg.append(s("g", {}, s("title", {}, `${n.name} listens for any message`),
        edge(p, stop, "edge listen", 0)));
    }
  }
  for (const e of w.edges) {
    const a = at[e.from.id], b = at[e.to.id];
    if (!a || !b) continue;
    const isDead = dead.has(`${e.from.id}>${e.to.id}`);
    const both = pairs.has(`${e.to.id}>${e.from.id}`);
    svg.append(s("g", {}, s("title", {}, `${e.from.name} waits on ${e.to.name}: ${e.kind} ` +
      `${e.id} ${e.text}`), edge(a, b, `edge ${token(e.kind)}${isDead ? " dead" : ""}`,
      both ? 26 : 0)));
  }
  for (const n of nodes) {
    const [x, y] = at[n.id];
    svg.append(s("g", {class: `node st-${token(n.status)}${inCycle.has(n.id) ? " dead" : ""}`,
      "data-id": n.id},
      s("title", {}, `${n.name} (${n.handle}), ${n.client}, ${n.status}`),
      s("circle", {cx: x, cy: y, r: R}),
      s("text", {x, y: y + 4, "text-anchor": "middle", class: "client"}, short(n.client, 6)),
      s("text", {x, y: y + R + 15, "text-anchor": "middle", class: "label"}, short(n.name, 22)),
      s("text", {x, y: y + R + 29, "text-anchor": "middle", class: "status"}, n.status)));
  }
  if (w.deadlocks.length) {
    svg.append(s("text", {x: 10, y: 20, class: "dead-word"},
      `DEADLOCK (${w.deadlocks.length})`));
  }
  box.replaceChildren(svg);
  $("edges").replaceChildren(...w.edges.map(e => h("li",
    {class: dead.has(`${e.from.id}>${e.to.id}`) ? "dead" : null},
    h("b", {text: e.from.name}), " waits on ", h("b", {text: e.to.name}), ": ",
    `${e.kind} `, h("code", {text: e.id}), ` ${ago(e.since_epoch)} `,
    h("span", {class: "quote", text: e.text}))));
  if (!w.edges.length) $("edges").append(h("li", {class: "quiet"}, "nobody waits on anybody"));
}

function marker(id, cls) {
  return s("marker", {id, viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto-start-reverse"},
    s("path", {d: "M0,0 L10,5 L0,10 z", class: `${cls} head`}));
}

function deadlocks(st) {
  const w = st.waits || {deadlocks: [], nodes: []};
  const names = Object.fromEntries(w.nodes.map(n => [n.id, n.name]));
  const alarm = $("alarm");
  show(alarm, w.deadlocks.length > 0);
  alarm.replaceChildren(...w.deadlocks.map(d => h("p", {},
    h("strong", {}, d.blocked ? "DEADLOCK: " : "DEADLOCK (one still works): "),
    d.cycle.map(id => names[id] || id).join(" → "),
    " — each waits on the next; someone must report, answer or cancel to break it")));
}

function approvals(st) {
  const items = st.approvals || [];
  $("approvals-count").textContent = st.approvals_total ? `(${st.approvals_total})` : "";
  show($("approvals-empty"), !items.length);
  $("approvals").replaceChildren(...items.map(a => {
    const who = (a.session && a.session.name) || a.session_id;
    const answer = outcome => post("approve", {approval_id: a.id, session: a.session_id, outcome},
      r => r.receipt === "accepted" ? `${outcome === "reject" ? "rejected" : "allowed once"}: ` +
        `${a.tool_name} of ${who}` : `not pending: it was already ${r.status}`);
    return h("li", {class: "card approval", "data-id": a.id},
      h("div", {class: "what"}, h("b", {text: who}), " asks to run ",
        h("code", {text: a.tool_name})),
      h("div", {class: "quote", text: a.summary}),
      a.reason ? h("div", {class: "reason", text: a.reason}) : null,
      h("div", {class: "meta", text: `${a.id} · waiting ${a.waited}`}),
      h("div", {class: "buttons"},
        h("button", {type: "button", class: "allow", on: {click: () => answer("allow-once")}},
          "Allow once"),
        h("button", {type: "button", class: "reject", on: {click: () => answer("reject")}},
          "Reject")));
  }));
}

function targets(st) {
  const select = $("send-to");
  const was = select.value;
  const options = st.sessions.filter(x => !x.self).map(x => h("option", {value: x.id,
    text: `${x.name} (${x.handle}, ${x.status})`}));
  select.replaceChildren(...options);
  if (was && st.sessions.some(x => x.id === was)) select.value = was;
  $("send").querySelector("button").disabled = !options.length;
}

function pick(id) {
  $("send-to").value = id;
  $("send-text").focus();
}

function reservations(st) {
  const rows = st.reservations || [];
  $("reservations-count").textContent = rows.length ? `(${rows.length})` : "";
  show($("reservations-empty"), !rows.length);
  $("reservations").replaceChildren(...rows.map(r => h("li", {class: "card", "data-id": r.id},
    h("div", {class: "what"}, h("code", {text: r.pattern}), ` ${r.exclusive ? "exclusive" : "shared"}`),
    h("div", {class: "meta"}, h("b", {text: r.holder.name}), r.machine && st.team ? ` on ${r.machine}` : "",
      ` · until ${clock(r.expires_at_epoch)} · taken ${ago(r.created_at_epoch)}`),
    r.reason ? h("div", {class: "quote", text: r.reason}) : null,
    h("div", {class: "buttons"}, h("button", {type: "button", class: "release",
      title: r.self ? "release it" : `release it for ${r.holder.name} (recorded in the activity log)`,
      on: {click: () => post("release", {reservation_id: r.id},
        x => x.released.length ? `released ${r.pattern}` : `not held any more: ${r.pattern}`)}},
      "Release")))));
}

function activity(st) {
  const items = st.activity || [];
  show($("activity-empty"), !items.length);
  $("activity").replaceChildren(...items.map(e => h("li", {},
    h("time", {text: clock(e.at_epoch), title: ago(e.at_epoch)}), " ",
    h("span", {class: `kind k-${token(e.kind.split(" ")[0].split(".")[0])}`, text: e.kind}), " ",
    h("b", {text: e.who || ""}), e.whom ? " → " : "", e.whom ? h("b", {text: e.whom}) : null,
    e.what ? " " : "", e.what ? h("span", {class: "quote", text: e.what}) : null)));
}

// -- talking to the server ------------------------------------------------------------------

function say(text, bad) {
  const node = $("said");
  node.textContent = text;
  node.className = bad ? "said bad" : "said";
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { node.textContent = ""; node.className = "said"; }, 8000);
}

async function post(action, body, done) {
  const buttons = [...document.querySelectorAll("button")];
  buttons.forEach(b => { b.disabled = true; });
  try {
    const r = await fetch(`action/${action}?token=${encodeURIComponent(TOKEN)}`, {
      method: "POST", headers: {"Content-Type": "application/json", "X-Nexus-Nonce": NONCE},
      body: JSON.stringify(body), cache: "no-store", credentials: "omit"});
    const got = await r.json();
    if (got.ok) say(done(got.result), false);
    else say(got.error.shown || `refused (${r.status})`, true);
    return got.ok;
  } catch (err) {
    say(`the board did not answer: ${err}`, true);
    return false;
  } finally {
    buttons.forEach(b => { b.disabled = false; });
    if (current) targets(current);
  }
}

$("send").addEventListener("submit", async ev => {
  ev.preventDefault();
  const to = $("send-to"), text = $("send-text");
  const name = to.selectedOptions.length ? to.selectedOptions[0].textContent : to.value;
  if (await post("send", {target: to.value, text: text.value}, () => `sent to ${name}`)) {
    text.value = "";
  }
});

function listen() {
  const live = $("live");
  const source = new EventSource(`events?token=${encodeURIComponent(TOKEN)}`);
  source.onopen = () => { live.textContent = "live"; live.className = "live on"; };
  source.onmessage = ev => render(JSON.parse(ev.data));
  source.onerror = () => {
    live.textContent = "not answering: is `nexus board --web` still running?";
    live.className = "live off";
  };
}

let resized = null;
window.addEventListener("resize", () => {
  clearTimeout(resized);
  resized = setTimeout(() => { if (current) graph(current); }, 150);
});
listen();
