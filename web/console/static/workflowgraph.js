// The drawing of a workflow graph: each node a labelled box at its
// position when the definition gives one, the others in layers by their
// distance from the startCall node (a breadth-first walk of the edges);
// each edge an arrow with its label. Built with createElementNS and
// textContent only, a slice at a time so that a large definition (the API
// allows 1 MiB, some 4,000 nodes) never holds the page for long.

const NS = "http://www.w3.org/2000/svg";
const BOX_W = 180;
const BOX_H = 54;
const GAP_X = 90;
const GAP_Y = 36;
const PAD = 24;
/** Elements built per slice before the browser gets a turn. */
const SLICE = 300;
/** Layers side by side before the layout wraps to a new band below. */
const BAND = 6;
/** Up to this many nodes the drawing is scaled to the width of its frame. */
const FIT_NODES = 40;

/**
 * Returns the top-left corner of each node's box, by node index: the
 * node's position, or its place in the layered layout, which starts to the
 * right of the positioned boxes.
 */
export function layout(model) {
  const { nodes, edges } = model;
  const at = new Array(nodes.length);
  let maxX = -Infinity;
  let minY = Infinity;
  for (const n of nodes) {
    if (!n.position) continue;
    at[n.index] = { x: n.position.x, y: n.position.y };
    maxX = Math.max(maxX, n.position.x);
    minY = Math.min(minY, n.position.y);
  }
  const free = nodes.filter((n) => !n.position);
  if (free.length === 0) return at;
  const out = nodes.map(() => []);
  const indeg = new Array(nodes.length).fill(0);
  for (const e of edges) {
    if (e.from >= 0 && e.to >= 0) {
      out[e.from].push(e.to);
      indeg[e.to]++;
    }
  }
  const layer = new Array(nodes.length).fill(-1);
  let queue = nodes.filter((n) => n.type === "startCall").map((n) => n.index);
  if (queue.length === 0) queue = nodes.filter((n) => indeg[n.index] === 0 && n.type !== "globalNode").map((n) => n.index);
  for (const i of queue) layer[i] = 0;
  for (let head = 0; head < queue.length; head++) {
    const i = queue[head];
    for (const j of out[i]) {
      if (layer[j] < 0) {
        layer[j] = layer[i] + 1;
        queue.push(j);
      }
    }
  }
  let deepest = 0;
  for (const n of free) deepest = Math.max(deepest, layer[n.index]);
  const place = free.map((n) => {
    // Not reached from the start: a layer of their own after the others;
    // a globalNode stands apart, in the first layer.
    const l = layer[n.index];
    return l >= 0 ? l : n.type === "globalNode" ? 0 : deepest + 1;
  });
  const rows = [];
  for (const l of place) rows[l] = (rows[l] || 0) + 1;
  const tallest = Math.max(...rows.filter(Boolean));
  // A long chain wraps: BAND layers a band, the bands one under another.
  const bandH = tallest * (BOX_H + GAP_Y) + GAP_Y;
  const x0 = maxX === -Infinity ? 0 : maxX + BOX_W + 2 * GAP_X;
  const y0 = minY === Infinity ? 0 : minY;
  const used = [];
  free.forEach((n, k) => {
    const l = place[k];
    const row = (used[l] = (used[l] || 0) + 1) - 1;
    const band = Math.floor(l / BAND);
    at[n.index] = { x: x0 + (l % BAND) * (BOX_W + GAP_X), y: y0 + band * bandH + row * (BOX_H + GAP_Y) };
  });
  return at;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

function svgText(parent, attrs, value) {
  const t = el("text", attrs, parent);
  t.textContent = value;
  return t;
}

function clip(s, max) {
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

// border returns where the segment from the centre of a box toward (dx, dy)
// leaves the box.
function border(cx, cy, dx, dy) {
  const tx = dx === 0 ? Infinity : BOX_W / 2 / Math.abs(dx);
  const ty = dy === 0 ? Infinity : BOX_H / 2 / Math.abs(dy);
  const t = Math.min(tx, ty);
  return [cx + dx * t, cy + dy * t];
}

/**
 * Draws model into a new <svg> and resolves to it, or to null when
 * stillWanted() turns false on the way (a newer drawing started). bad is
 * {nodes: Set, edges: Set} of the indexes with a problem; onPick(index) is
 * called when a node's box is clicked.
 */
export async function draw(model, bad, stillWanted, onPick) {
  const at = layout(model);
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const p of at) {
    if (!p) continue;
    minX = Math.min(minX, p.x);
    minY = Math.min(minY, p.y);
    maxX = Math.max(maxX, p.x + BOX_W);
    maxY = Math.max(maxY, p.y + BOX_H);
  }
  if (minX === Infinity) minX = minY = maxX = maxY = 0;
  minX -= PAD;
  minY -= PAD + 16;
  const width = maxX + PAD - minX;
  const height = maxY + PAD - minY;
  const svg = el("svg", { viewBox: `${minX} ${minY} ${width} ${height}`, width, height, role: "img" });
  if (model.nodes.length <= FIT_NODES) svg.classList.add("wf-fit");
  const title = el("title", {}, svg);
  title.textContent = `Workflow graph: ${model.nodes.length} nodes, ${model.edges.length} edges`;
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "wf-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8,
    markerHeight: 8, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", class: "wf-arrow" }, marker);
  const edgeLayer = el("g", { class: "wf-edges" }, svg);
  const nodeLayer = el("g", { class: "wf-nodes" }, svg);
  const labelLayer = el("g", { class: "wf-labels" }, svg);

  const pairs = new Map(); // edges between the same two nodes fan out
  let built = 0;
  for (const e of model.edges) {
    if (e.from < 0 || e.to < 0) continue;
    drawEdge(e, at, pairs, bad.edges.has(e.index), edgeLayer, labelLayer);
    if (++built % SLICE === 0) {
      await pause();
      if (!stillWanted()) return null;
    }
  }
  for (const n of model.nodes) {
    drawNode(n, at[n.index], bad.nodes.has(n.index), nodeLayer, onPick);
    if (++built % SLICE === 0) {
      await pause();
      if (!stillWanted()) return null;
    }
  }
  return svg;
}

function drawNode(n, p, isBad, parent, onPick) {
  const cls = ["wf-box", "wf-type-" + n.type.replace(/[^A-Za-z]/g, "")];
  if (isBad) cls.push("wf-bad");
  const g = el("g", { class: cls.join(" "), transform: `translate(${p.x} ${p.y})`, "data-node-index": n.index }, parent);
  if (n.id) g.dataset.nodeId = n.id;
  el("rect", { width: BOX_W, height: BOX_H, rx: 8 }, g);
  const tip = el("title", {}, g);
  tip.textContent = `${n.name || "(no name)"} — ${n.type || "no type"} ${n.id || "(no id)"}`;
  svgText(g, { x: 10, y: 22, class: "wf-box-name" }, clip(n.name || "(no name)", 22));
  svgText(g, { x: 10, y: 41, class: "wf-box-meta" }, clip(`${n.type || "?"} · ${n.id || "no id"}`, 26));
  g.addEventListener("click", () => onPick(n.index));
}

function drawEdge(e, at, pairs, isBad, edgeLayer, labelLayer) {
  const a = at[e.from];
  const b = at[e.to];
  const ax = a.x + BOX_W / 2, ay = a.y + BOX_H / 2;
  const bx = b.x + BOX_W / 2, by = b.y + BOX_H / 2;
  const cls = "wf-edge" + (isBad ? " wf-bad" : "");
  let d, lx, ly;
  if (e.from === e.to) {
    // A loop over the top of the box.
    d = `M ${ax - 30} ${a.y} C ${ax - 40} ${a.y - 45}, ${ax + 40} ${a.y - 45}, ${ax + 30} ${a.y}`;
    lx = ax;
    ly = a.y - 38;
  } else {
    const key = e.from < e.to ? `${e.from}>${e.to}` : `${e.to}>${e.from}`;
    const k = pairs.get(key) || 0;
    pairs.set(key, k + 1);
    // Alternate sides: 0, +1, -1, +2, ... times 28 px off the straight line.
    const bend = k === 0 ? 0 : (k % 2 ? 1 : -1) * Math.ceil(k / 2) * 28 * (e.from < e.to ? 1 : -1);
    const len = Math.hypot(bx - ax, by - ay) || 1;
    const nx = -(by - ay) / len, ny = (bx - ax) / len;
    const cx = (ax + bx) / 2 + nx * bend * 2, cy = (ay + by) / 2 + ny * bend * 2;
    const [sx, sy] = border(ax, ay, cx - ax, cy - ay);
    const [tx, ty] = border(bx, by, cx - bx, cy - by);
    d = `M ${sx} ${sy} Q ${cx} ${cy} ${tx} ${ty}`;
    lx = (sx + 2 * cx + tx) / 4;
    ly = (sy + 2 * cy + ty) / 4;
  }
  const path = el("path", { d, class: cls, "marker-end": "url(#wf-arrow)", "data-edge-index": e.index }, edgeLayer);
  if (e.id) path.dataset.edgeId = e.id;
  if (e.label) {
    const t = svgText(labelLayer, { x: lx, y: ly - 4, "text-anchor": "middle", class: "wf-edge-label" + (isBad ? " wf-bad" : "") },
      clip(e.label, 28));
    t.dataset.edgeIndex = e.index;
  }
}

/** Gives the browser a turn (input, painting) before the next slice. */
export function pause() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
