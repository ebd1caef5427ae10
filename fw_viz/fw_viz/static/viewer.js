/* fw_viz graph viewer: layered layout, collapsible modules, zoom/pan, search, side panel.
   Reads the graph model (docs/viz_html.md) from the #fw-graph-data script element; no network. */
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("fw-graph-data").textContent);
  const svg = document.getElementById("fw-svg");
  const NS = svg.namespaceURI;
  const viewport = document.getElementById("fw-viewport");
  const panel = document.getElementById("fw-panel-body");
  const tip = document.getElementById("fw-tooltip");
  const search = document.getElementById("fw-search");
  const nodes = data.nodes || [];
  const byId = new Map(nodes.map((n, i) => [n.id, Object.assign({ index: i }, n)]));
  const foldDepth = data.fold && data.fold.default_depth != null ? data.fold.default_depth : 2;

  /* ---- module tree ---- */
  const prefixes = (path) => {
    if (!path) return [];
    const parts = path.split("."), out = [];
    for (let i = 1; i <= parts.length; i++) out.push(parts.slice(0, i).join("."));
    return out;
  };
  const modules = new Map();
  const addModule = (path, info) => {
    if (!path || modules.has(path)) return;
    modules.set(path, Object.assign({ path: path, type: "", repeat_group: null }, info || {},
      { depth: path.split(".").length }));
  };
  (data.modules || []).forEach((m) => addModule(m.path, m));
  nodes.forEach((n) => prefixes(n.module).forEach((p) => addModule(p, null)));
  const groups = new Map();
  modules.forEach((m) => {
    if (!m.repeat_group) return;
    if (!groups.has(m.repeat_group)) groups.set(m.repeat_group, []);
    groups.get(m.repeat_group).push(m.path);
  });
  groups.forEach((members, g) => { if (members.length < 2) groups.delete(g); });

  let collapsed, folded;
  const resetFold = () => {
    collapsed = new Set([...modules.values()].filter((m) => m.depth > foldDepth || groups.has(m.repeat_group))
      .map((m) => m.path));
    folded = new Set(groups.keys());
  };
  resetFold();

  /* ---- visible graph: each raw node maps to itself, a collapsed module, or a folded group of
     repeated modules (forward and backward ops of a module get separate boxes) ---- */
  const visibleOf = (n) => {
    for (const p of prefixes(n.module)) {
      if (!collapsed.has(p)) continue;
      const g = modules.get(p).repeat_group;
      return g && groups.has(g) && folded.has(g) ? ["group", g] : ["module", p];
    }
    return ["op", n.id];
  };
  const shapeText = (s) => (s ? "[" + s.shape.join(", ") + "] " + (s.dtype || "") : "");
  const dtypeShort = (d) => (d || "").replace("float", "f").replace("int", "i");

  const edgeList = data.edges || [];
  const fed = new Set(edgeList.map((e) => e.target));
  const firstUse = new Map();
  edgeList.forEach((e) => {
    const t = byId.get(e.target);
    if (t && (!firstUse.has(e.source) || t.index < firstUse.get(e.source).index)) firstUse.set(e.source, t);
  });
  const keyFor = (n) => {
    const [kind, name] = visibleOf(n);
    return [kind, name, kind + ":" + name + (kind !== "op" && n.phase === "backward" ? ":bwd" : "")];
  };

  /* A source that is not a graph input (a constant, a parameter, a mask) and whose first consumer
     sits in a box is drawn inside that box: it belongs to what uses it. */
  function buildVisible() {
    const vis = new Map(), keyOf = new Map();
    byId.forEach((n) => {
      let [kind, name, key] = keyFor(n);
      if (kind === "op" && n.op !== "input" && !fed.has(n.id) && firstUse.has(n.id)) {
        const [k2, name2, key2] = keyFor(firstUse.get(n.id));
        if (k2 !== "op") [kind, name, key] = [k2, name2, key2];
      }
      keyOf.set(n.id, key);
      if (!vis.has(key)) {
        vis.set(key, { key: key, kind: kind, name: name, members: [], order: n.index, outShapes: new Set() });
      }
      vis.get(key).members.push(n);
    });
    const edges = new Map();
    edgeList.forEach((e) => {
      const s = keyOf.get(e.source), t = keyOf.get(e.target);
      if (!s || !t || s === t) return;
      const samePhase = byId.get(e.source).phase === byId.get(e.target).phase;
      if (vis.get(s).kind !== "op" && samePhase) vis.get(s).outShapes.add(shapeText(e));
      const k = s + "->" + t;
      if (!edges.has(k)) edges.set(k, { source: s, target: t, label: e.shape ? "[" + e.shape.join(",") + "] " + dtypeShort(e.dtype) : "" });
    });
    vis.forEach((v) => {
      if (v.kind !== "op" && v.outShapes.size === 0) {
        (v.members[v.members.length - 1].outputs || []).forEach((o) => v.outShapes.add(shapeText(o)));
      }
    });
    return { vis: vis, edges: [...edges.values()] };
  }

  /* ---- layout. Layers: longest path in execution order (edges going back in that order are
     ignored), sources (inputs, parameters) placed just before their first consumer, and only items
     of the same innermost open module may share a layer, so module boxes never overlap. Within a
     layer: barycentre of the predecessors. Layer heights leave room for the module headers. ---- */
  function nodeLines(v) {
    if (v.kind === "op") {
      const n = v.members[0];
      const out = (n.outputs || [])[0];
      return [n.op + (n.phase === "backward" ? " (bwd)" : ""), out ? "[" + out.shape.join("×") + "]" : ""];
    }
    const ops = v.members.length + " ops";
    const shapes = [...v.outShapes].slice(0, 2).join(" ");
    const bwd = v.members[0].phase === "backward" ? " (bwd)" : "";
    if (v.kind === "group") return [v.name + " × " + groups.get(v.name).length + bwd, ops, shapes];
    const m = modules.get(v.name);
    return [v.name + (m.type ? " : " + m.type : "") + bwd, ops, shapes];
  }
  const visModule = (v) => (v.kind === "op" ? v.members[0].module || "" : v.kind === "module" ? v.name : groups.get(v.name)[0]);
  const openChain = (v) => prefixes(visModule(v)).filter((p) => !collapsed.has(p));
  const phaseOf = (v) => (v.members[0].phase === "backward" ? "|bwd" : "");

  function layout(g) {
    const all = [...g.vis.values()];
    const preds = new Map(all.map((v) => [v.key, []])), succs = new Map(all.map((v) => [v.key, []]));
    g.edges.forEach((e) => { preds.get(e.target).push(e.source); succs.get(e.source).push(e.target); });
    all.forEach((v) => {
      const after = succs.get(v.key).map((s) => g.vis.get(s).order).filter((o) => o > v.order);
      v.seq = preds.get(v.key).length === 0 && after.length ? Math.min(...after) - 0.5 : v.order;
    });
    const list = all.sort((a, b) => a.seq - b.seq);
    const deepest = new Map();  // innermost open module -> its deepest layer so far
    list.forEach((v) => {
      const chain = openChain(v);
      v.cluster = (chain.length ? chain[chain.length - 1] : "") + phaseOf(v);
      v.layer = 0;
      deepest.forEach((l, c) => { if (c !== v.cluster) v.layer = Math.max(v.layer, l + 1); });
      preds.get(v.key).forEach((p) => { const u = g.vis.get(p); if (u.seq < v.seq) v.layer = Math.max(v.layer, u.layer + 1); });
      deepest.set(v.cluster, Math.max(deepest.get(v.cluster) || 0, v.layer));
      v.lines = nodeLines(v);
      v.w = Math.max(80, 7 * Math.max(...v.lines.map((l) => l.length)) + 20);
      v.h = v.kind === "op" ? 38 : 54;
    });
    const layers = [], range = new Map();
    list.forEach((v) => {
      (layers[v.layer] = layers[v.layer] || []).push(v);
      openChain(v).forEach((p) => {
        const c = p + phaseOf(v), r = range.get(c) || { lo: v.layer, hi: v.layer };
        range.set(c, { lo: Math.min(r.lo, v.layer), hi: Math.max(r.hi, v.layer) });
      });
    });
    const opens = [], closes = [];
    range.forEach((r) => { opens[r.lo] = (opens[r.lo] || 0) + 1; closes[r.hi] = (closes[r.hi] || 0) + 1; });
    let top = 0;
    layers.forEach((row, li) => {
      if (!row) return;
      top += 26 * (opens[li] || 0);
      let cursor = 0, right = -Infinity;
      row.forEach((v) => {
        const ps = preds.get(v.key).map((p) => g.vis.get(p)).filter((p) => p.layer < li);
        v.want = ps.length ? ps.reduce((s, p) => s + p.x, 0) / ps.length : cursor;
        cursor = v.want + v.w + 30;
      });
      row.sort((a, b) => a.want - b.want).forEach((v) => {
        v.x = Math.max(v.want, right + 30 + v.w / 2);
        right = v.x + v.w / 2;
        v.y = top;
      });
      top += Math.max(...row.map((v) => v.h)) + 46 + 10 * (closes[li] || 0);
    });
    return list;
  }

  /* ---- drawing ---- */
  const el = (tag, attrs, parent) => {
    const e = document.createElementNS(NS, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (parent) parent.appendChild(e);
    return e;
  };
  const text = (parent, x, y, s, cls) => { const t = el("text", { x: x, y: y, class: cls || "" }, parent); t.textContent = s; return t; };
  const hue = (s) => { let h = 0; for (const c of String(s)) h = (h * 31 + c.charCodeAt(0)) % 360; return h; };
  const under = (modulePath, path) => modulePath === path || (modulePath || "").startsWith(path + ".");
  const box = (vs) => ({ x0: Math.min(...vs.map((v) => v.x0)), y0: Math.min(...vs.map((v) => v.y0)),
    x1: Math.max(...vs.map((v) => v.x1)), y1: Math.max(...vs.map((v) => v.y1)) });

  function drawClusters(list, layerClusters, layerHulls) {
    const open = [...modules.values()].filter((m) => !collapsed.has(m.path)
      && prefixes(m.path).slice(0, -1).every((p) => !collapsed.has(p)))
      .sort((a, b) => b.depth - a.depth);
    const boxes = new Map();  // one box per open module and phase: forward and backward runs apart
    open.forEach((m) => ["", "|bwd"].forEach((phase) => {
      const inside = list.filter((v) => phaseOf(v) === phase && under(visModule(v), m.path));
      if (!inside.length) return;
      const kids = [...boxes.values()].filter((k) => k.phase === phase && k.path.startsWith(m.path + "."));
      const b = box(inside.concat(kids));
      const title = "▾ " + m.path + (m.type ? " : " + m.type : "");
      const x1 = Math.max(b.x1 + 12, b.x0 - 4 + 6.5 * title.length);  // wide enough for its header
      boxes.set(m.path + phase, { path: m.path, phase: phase, title: title, x0: b.x0 - 12, y0: b.y0 - 26, x1: x1, y1: b.y1 + 10 });
    }));
    [...boxes.values()].reverse().forEach((b) => {
      const path = b.path;
      const gEl = el("g", { class: "cluster", "data-module": path }, layerClusters);
      el("rect", { x: b.x0, y: b.y0, width: b.x1 - b.x0, height: b.y1 - b.y0, rx: 8 }, gEl);
      const label = text(gEl, b.x0 + 8, b.y0 + 16, b.title, "cluster-label");
      label.setAttribute("data-module", path);
      label.addEventListener("click", (ev) => { ev.stopPropagation(); collapsed.add(path); render(); });
    });
    const fused = new Map();
    list.forEach((v) => {
      const id = v.kind === "op" && v.members[0].fused;
      if (!id) return;
      if (!fused.has(id)) fused.set(id, []);
      fused.get(id).push(v);
    });
    fused.forEach((vs, id) => {
      const b = box(vs), h = hue(id);
      const gEl = el("g", { class: "fused-region", "data-fused": id }, layerHulls);
      el("rect", { x: b.x0 - 6, y: b.y0 - 6, width: b.x1 - b.x0 + 12, height: b.y1 - b.y0 + 12, rx: 10, style: "stroke: hsl(" + h + ",70%,45%); fill: hsl(" + h + ",80%,92%)" }, gEl);
      text(gEl, b.x1 + 10, b.y0 + 8, "fused " + id + (vs[0].members[0].fused_rule ? " · " + vs[0].members[0].fused_rule : ""), "fused-label");
    });
  }

  function drawNode(v, parent) {
    const n = v.members[0];
    const classes = ["node", v.kind];
    if (v.kind === "op") {
      classes.push("op-" + n.op, n.phase === "backward" ? "backward" : "forward");
      if (n.op === "input" || n.op === "parameter") classes.push("source");
      if (n.fused) classes.push("fused");
    } else if (v.members.some((m) => m.fused)) classes.push("has-fused");
    const gEl = el("g", { class: classes.join(" "), "data-key": v.key, transform: "translate(" + v.x0 + "," + v.y0 + ")" }, parent);
    gEl.dataset.search = (v.name + " " + v.members.map((m) => m.op + " " + (m.module || "")).join(" ")).toLowerCase();
    el("rect", { width: v.w, height: v.h, rx: v.kind === "op" ? 5 : 8 }, gEl);
    v.lines.forEach((l, i) => text(gEl, v.w / 2, 15 + i * 14, l, i === 0 ? "title" : "sub"));
    if (v.kind === "op" && n.memory_tag) {
      el("rect", { class: "mem-bar mem-" + n.memory_tag, x: 0, y: 0, width: 5, height: v.h }, gEl);
    }
    gEl.addEventListener("click", (ev) => {
      ev.stopPropagation();
      showPanel(v);
      if (v.kind === "module") { collapsed.delete(v.name); render(); } else if (v.kind === "group") { folded.delete(v.name); render(); }
    });
    gEl.addEventListener("mouseenter", (ev) => showTip(v, ev));
    gEl.addEventListener("mousemove", (ev) => moveTip(ev));
    gEl.addEventListener("mouseleave", () => { tip.hidden = true; });
  }

  function render() {
    const g = buildVisible();
    const list = layout(g);
    list.forEach((v) => { v.x0 = v.x - v.w / 2; v.y0 = v.y; v.x1 = v.x + v.w / 2; v.y1 = v.y + v.h; });
    viewport.textContent = "";
    const layerClusters = el("g", { class: "clusters" }, viewport), layerHulls = el("g", { class: "hulls" }, viewport);
    const layerEdges = el("g", { class: "edges" }, viewport), layerNodes = el("g", { class: "nodes" }, viewport);
    drawClusters(list, layerClusters, layerHulls);
    g.edges.forEach((e) => {
      const a = g.vis.get(e.source), b = g.vis.get(e.target);
      const x1 = a.x, y1 = a.y1, x2 = b.x, y2 = b.y0, my = (y1 + y2) / 2;
      el("path", { class: "edge", d: "M" + x1 + "," + y1 + " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," + y2 }, layerEdges);
      // the label sits a quarter along the curve, just below the source, clear of module headers
      if (e.label) text(layerEdges, 0.84375 * x1 + 0.15625 * x2 + 4, 0.421875 * y1 + 0.5625 * my + 0.015625 * y2 + 4, e.label, "edge-label");
    });
    list.forEach((v) => drawNode(v, layerNodes));
    document.getElementById("fw-stats").textContent = list.length + " shown · " + nodes.length + " ops";
    applySearch();
  }

  /* ---- side panel and tooltip (built with textContent: graph strings are never parsed as HTML) ---- */
  const fmt = (x) => (typeof x === "number" ? Number(x.toPrecision(4)) : x);
  const summaryText = (s) => (s ? Object.entries(s).map(([k, x]) => k + " " + fmt(x)).join(", ") : "");
  function rows(pairs) {
    panel.textContent = "";
    const dl = document.createElement("dl");
    pairs.forEach(([k, v]) => {
      if (v == null || v === "") return;
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k; dd.textContent = String(v);
      dl.append(dt, dd);
    });
    panel.appendChild(dl);
  }
  function showPanel(v) {
    if (v.kind !== "op") {
      const m = v.kind === "module" ? modules.get(v.name) : null;
      rows([["module", v.kind === "group" ? v.name + " × " + groups.get(v.name).length : v.name],
        ["type", m && m.type], ["ops", v.members.length], ["outputs", [...v.outShapes].join("; ")],
        ["ops inside", [...new Set(v.members.map((n) => n.op))].join(", ")]]);
      return;
    }
    const n = v.members[0];
    rows([["op", n.op], ["id", n.id], ["module", n.module], ["phase", n.phase], ["signature", n.signature],
      ["doc", n.doc], ["structure", n.structure], ["anchor", n.anchor],
      ["inputs", (n.inputs || []).map(shapeText).join("; ")], ["outputs", (n.outputs || []).map(shapeText).join("; ")],
      ["time", n.time_ms != null ? fmt(n.time_ms) + " ms" : null], ["memory", n.memory_tag],
      ["fused", n.fused ? n.fused + (n.fused_rule ? " (" + n.fused_rule + ")" : "") : null],
      ["value", summaryText(n.summary)], ["grad", summaryText(n.grad_summary)]]);
  }
  function showTip(v, ev) {
    const n = v.members[0];
    const lines = v.kind === "op"
      ? [n.op + " → " + (n.outputs || []).map(shapeText).join("; "), n.summary ? "value: " + summaryText(n.summary) : "",
        n.grad_summary ? "grad: " + summaryText(n.grad_summary) : "", n.time_ms != null ? "time: " + fmt(n.time_ms) + " ms" : ""]
      : [v.lines[0], v.members.length + " ops · click to expand"];
    tip.textContent = lines.filter(Boolean).join("\n");
    tip.hidden = false;
    moveTip(ev);
  }
  function moveTip(ev) { tip.style.left = ev.clientX + 14 + "px"; tip.style.top = ev.clientY + 14 + "px"; }

  /* ---- search ---- */
  function applySearch() {
    const q = search.value.trim().toLowerCase();
    let count = 0;
    viewport.querySelectorAll("g.node").forEach((gEl) => {
      const hit = q !== "" && gEl.dataset.search.includes(q);
      gEl.classList.toggle("highlight", hit);
      count += hit ? 1 : 0;
    });
    document.getElementById("fw-search-count").textContent = q ? count + " match" + (count === 1 ? "" : "es") : "";
  }
  search.addEventListener("input", applySearch);

  /* ---- zoom and pan ---- */
  const view = { k: 1, x: 0, y: 0 };
  const apply = () => viewport.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")");
  function fit() {
    const b = viewport.getBBox(), r = svg.getBoundingClientRect();
    if (!b.width || !r.width) return;
    view.k = Math.min(1.5, 0.95 * Math.min(r.width / b.width, r.height / b.height));
    view.x = (r.width - b.width * view.k) / 2 - b.x * view.k;
    view.y = (r.height - b.height * view.k) / 2 - b.y * view.k;
    if (view.k < 0.5) {  // a tall graph: fit the width (at most 1:1) and start at the top
      view.k = Math.min(1, 0.95 * r.width / b.width);
      view.x = (r.width - b.width * view.k) / 2 - b.x * view.k;
      view.y = 10 - b.y * view.k;
    }
    apply();
  }
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    const k = Math.min(8, Math.max(0.05, view.k * Math.exp(-ev.deltaY * 0.0015)));
    view.x = px - (px - view.x) * (k / view.k); view.y = py - (py - view.y) * (k / view.k); view.k = k;
    apply();
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX - view.x, y: ev.clientY - view.y }; });
  window.addEventListener("mousemove", (ev) => { if (drag) { view.x = ev.clientX - drag.x; view.y = ev.clientY - drag.y; apply(); } });
  window.addEventListener("mouseup", () => { drag = null; });

  document.getElementById("fw-fit").addEventListener("click", fit);
  document.getElementById("fw-expand-all").addEventListener("click", () => { collapsed.clear(); folded.clear(); render(); fit(); });
  document.getElementById("fw-reset").addEventListener("click", () => { resetFold(); render(); fit(); });
  render();
  fit();
})();
