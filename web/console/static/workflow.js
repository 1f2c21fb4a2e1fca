// The workflow definition editor: the JSON in the textarea is read as it
// changes (debounced) into a list of its nodes and edges and a drawing of
// the graph; Save and Validate call the API (PUT/POST /api/v1/workflow,
// POST /api/v1/workflow/{id}/validate) and each problem is shown beside
// the node or edge it names, whose box in the drawing turns red. JSON that
// does not parse is reported with its line and column; the list and the
// drawing keep the last definition that did.
import { APIError, csrfToken } from "./console.js";
import { draw, pause } from "./workflowgraph.js";
import { placeProblems, readModel, syntaxError, where } from "./workflowmodel.js";

const $ = (id) => document.getElementById(id);
const page = $("wf-editor");
const form = $("wf-form");
const nameInput = $("wf-name");
const area = $("wf-definition");
const statusLine = $("wf-status");
const errorLine = $("wf-error");
const nameError = $("wf-name-error");
const defError = $("wf-definition-error");
const gotoError = $("wf-goto-error");
const result = $("wf-result");
const problemList = $("wf-problems");
const drawing = $("wf-drawing");
const drawingNote = $("wf-drawing-note");
const nodeList = $("wf-nodes");
const edgeList = $("wf-edges");
const validateForm = $("wf-validate-form");

const workflowID = Number(page.dataset.workflowId) || 0;
/** Entries built per slice of a large list before the browser gets a turn. */
const SLICE = 250;
/** Entries a list shows at first, and how many more each "Show more" adds. */
const LIST_STEP = 200;
/** Nodes drawn at most. */
const DRAW_NODES = 400;

const state = {
  model: readModel({}),
  problems: [...problemList.querySelectorAll("li")].map((li) => ({
    kind: li.dataset.kind || "", id: li.dataset.id || "", field: li.dataset.field || "",
    loc: li.dataset.loc || "", message: li.querySelector(".wf-msg")?.textContent || li.textContent,
  })),
  // A refused form comes back with the text sent, which is not saved.
  savedText: page.dataset.unsaved === "true" ? null : area.value,
  savedName: nameInput.value,
  generation: 0,
  syntaxAt: -1,
  busy: false,
  shown: { node: LIST_STEP, edge: LIST_STEP },
};

function say(el, text) {
  el.textContent = text;
}

function dirty() {
  return area.value !== state.savedText || nameInput.value !== state.savedName;
}

// ---- reading the JSON as it changes ----

let timer = 0;
area.addEventListener("input", () => {
  clearTimeout(timer);
  // A large text waits a little longer: parsing a megabyte takes a moment.
  timer = setTimeout(refresh, 250 + Math.min(1000, area.value.length / 2000));
  say(statusLine, dirty() ? "Unsaved changes." : "");
});
nameInput.addEventListener("input", () => say(statusLine, dirty() ? "Unsaved changes." : ""));
gotoError.addEventListener("click", () => {
  if (state.syntaxAt < 0) return;
  area.focus();
  area.setSelectionRange(state.syntaxAt, Math.min(state.syntaxAt + 1, area.value.length));
});

/** Parses the textarea; on success redraws everything, else shows where it broke. */
function refresh() {
  const source = area.value;
  let def;
  try {
    def = JSON.parse(source);
  } catch (err) {
    const se = syntaxError(err, source);
    state.syntaxAt = se.index;
    say(defError, `JSON syntax error at line ${se.line}, column ${se.column}: ${se.message}`);
    area.setAttribute("aria-invalid", "true");
    gotoError.hidden = false;
    state.generation++; // a redraw under way is of text that is gone
    drawing.dataset.state = "stale";
    return;
  }
  state.syntaxAt = -1;
  gotoError.hidden = true;
  say(defError, "");
  area.removeAttribute("aria-invalid");
  state.model = readModel(def);
  render();
}

// ---- the lists, the problems and the drawing ----

async function render() {
  const gen = ++state.generation;
  const wanted = () => gen === state.generation;
  const { model } = state;
  const placed = placeProblems(state.problems, model);
  renderProblems(placed);
  drawing.dataset.state = "drawing";
  const bad = { nodes: new Set(placed.nodes.keys()), edges: new Set(placed.edges.keys()) };
  for (const e of model.edges) if (e.from < 0 || e.to < 0) bad.edges.add(e.index);
  if (!(await fillList(nodeList, model.nodes, placed.nodes, nodeEntry, "node", wanted))) return;
  if (!(await fillList(edgeList, model.edges, placed.edges, edgeEntry, "edge", wanted))) return;
  // A drawing of thousands of boxes is of no use and costs the browser
  // seconds: the first DRAW_NODES nodes are drawn, the list has them all.
  const drawn = model.nodes.length > DRAW_NODES
    ? { nodes: model.nodes.slice(0, DRAW_NODES), edges: model.edges.filter((e) => e.from < DRAW_NODES && e.to < DRAW_NODES) }
    : model;
  const svg = await draw(drawn, bad, wanted, pick);
  if (!svg || !wanted()) return;
  drawing.replaceChildren(svg);
  const unseen = model.edges.filter((e) => e.from < 0 || e.to < 0).length;
  let note = `${model.nodes.length} node(s), ${model.edges.length} edge(s).`;
  if (drawn !== model) note += ` The drawing shows the first ${DRAW_NODES} nodes and the edges between them.`;
  if (unseen) note += ` ${unseen} edge(s) naming a missing node are not drawn.`;
  say(drawingNote, note);
  drawing.dataset.state = "ready";
}

// fillList lists the first shown[kind] items, and every item with a
// problem, then a button that lists more.
async function fillList(list, items, problems, entry, kind, wanted) {
  const frag = document.createDocumentFragment();
  const limit = state.shown[kind];
  let built = 0;
  for (let i = 0; i < items.length; i++) {
    if (i >= limit && !problems.has(i)) continue;
    frag.appendChild(entry(items[i], problems.get(i) || []));
    if (++built % SLICE === 0) {
      await pause();
      if (!wanted()) return false;
    }
  }
  const hidden = items.length - built;
  if (hidden > 0) {
    const li = add(frag, "li", "wf-more");
    const more = add(li, "button", "wf-secondary", `Show ${Math.min(LIST_STEP, hidden)} more (${hidden} not listed)`);
    more.type = "button";
    more.addEventListener("click", async () => {
      const first = state.shown[kind];
      state.shown[kind] += LIST_STEP;
      await render();
      focusEntry(`wf-${kind}-${first}`);
    });
  }
  list.replaceChildren(frag);
  return true;
}

function add(parent, tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e);
  return e;
}

function clip(s, max) {
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function entryShell(kind, item, problems) {
  const li = document.createElement("li");
  li.className = "wf-entry" + (problems.length ? " wf-bad" : "");
  li.id = `wf-${kind}-${item.index}`;
  li.tabIndex = -1;
  li.dataset[kind + "Index"] = item.index;
  if (item.id) li.dataset[kind + "Id"] = item.id;
  return li;
}

function entryErrors(li, problems) {
  if (!problems.length) return;
  const ul = add(li, "ul", "wf-entry-errors");
  for (const p of problems) add(ul, "li", "", (p.field ? p.field + ": " : "") + p.message);
}

function nodeEntry(n, problems) {
  const li = entryShell("node", n, problems);
  const head = add(li, "div", "wf-entry-head");
  add(head, "strong", "", n.ok ? n.name || "(no name)" : `(node ${n.index} is not an object)`);
  add(head, "span", "wf-entry-type", n.type || "no type");
  add(head, "span", "wf-entry-id", n.id || "no id");
  if (n.prompt) add(li, "p", "wf-entry-text", clip(n.prompt, 240));
  entryErrors(li, problems);
  return li;
}

function edgeEntry(e, problems) {
  const li = entryShell("edge", e, problems);
  const head = add(li, "div", "wf-entry-head");
  add(head, "span", "wf-entry-id", `${e.source || "?"} → ${e.target || "?"}`);
  add(head, "strong", "", e.ok ? e.label || "(no label)" : `(edge ${e.index} is not an object)`);
  add(head, "span", "wf-entry-id", e.id || "no id");
  if (e.condition) add(li, "p", "wf-entry-text", clip(e.condition, 240));
  entryErrors(li, problems);
  return li;
}

// renderProblems lists every problem in the API's order (workflow, nodes,
// edges); one placed on a node or edge links to its entry.
function renderProblems(placed) {
  const href = new Map();
  for (const [i, ps] of placed.nodes) for (const p of ps) href.set(p, `wf-node-${i}`);
  for (const [i, ps] of placed.edges) for (const p of ps) href.set(p, `wf-edge-${i}`);
  const items = state.problems.map((p) => {
    const li = document.createElement("li");
    const w = where(p);
    if (w) add(li, "span", "wf-where", w + " ");
    const target = href.get(p);
    if (!target) {
      add(li, "span", "wf-msg", p.message);
      return li;
    }
    const a = add(li, "a", "wf-msg", p.message);
    a.href = "#" + target;
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      focusEntry(target);
    });
    return li;
  });
  problemList.replaceChildren(...items);
}

function focusEntry(id) {
  const li = $(id);
  if (!li) return;
  li.scrollIntoView({ block: "nearest" });
  li.focus();
}

function pick(index) {
  focusEntry(`wf-node-${index}`);
}

// ---- saving and validating ----

function setBusy(b) {
  state.busy = b;
  for (const btn of document.querySelectorAll("#wf-save, #wf-validate")) btn.disabled = b;
}

function clearMessages() {
  say(errorLine, "");
  say(nameError, "");
  nameInput.removeAttribute("aria-invalid");
}

/** Sends raw JSON text; resolves to the decoded answer or rejects with an APIError. */
async function send(method, path, body) {
  const headers = { Accept: "application/json", "X-CSRF-Token": csrfToken() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body, credentials: "same-origin" });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.status === 401) {
    location.assign("/console/sign-in?next=" + encodeURIComponent(location.pathname));
  }
  if (!res.ok) throw new APIError(res.status, data && data.detail !== undefined ? data.detail : res.statusText);
  return data;
}

function showFailure(err) {
  if (!(err instanceof APIError)) {
    say(errorLine, "The server could not be reached. Try again.");
    return;
  }
  if (err.status === 422 && Array.isArray(err.detail)) {
    const rest = [];
    for (const p of err.detail) {
      const loc = Array.isArray(p.loc) ? p.loc.join(".") : "";
      if (loc === "body.name") {
        say(nameError, p.msg);
        nameInput.setAttribute("aria-invalid", "true");
      } else if (loc === "body.workflow_definition") {
        say(defError, p.msg);
        area.setAttribute("aria-invalid", "true");
      } else {
        rest.push({ kind: "", id: "", field: "", loc, message: String(p.msg) });
      }
    }
    state.problems = rest;
    say(result, rest.length ? `The save was refused: ${rest.length} problem(s).` : "The save was refused.");
    result.className = "error";
    render();
    return;
  }
  const detail = typeof err.detail === "string" ? err.detail : err.message;
  if (err.status === 409 && detail.includes("already exists")) {
    say(nameError, detail); // a name in use, not the workflow limit
    nameInput.setAttribute("aria-invalid", "true");
    nameInput.focus();
    return;
  }
  say(errorLine, detail);
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (state.busy) return;
  clearMessages();
  clearTimeout(timer);
  refresh();
  if (state.syntaxAt >= 0) {
    area.focus();
    return;
  }
  const text = area.value.trim();
  const body = `{"name":${JSON.stringify(nameInput.value)},"workflow_definition":${text}}`;
  setBusy(true);
  say(statusLine, "Saving…");
  try {
    const saved = await send(workflowID ? "PUT" : "POST", workflowID ? `/api/v1/workflow/${workflowID}` : "/api/v1/workflow", body);
    if (!workflowID) {
      location.assign(`/console/workflows/${saved.id}?saved=1`);
      return;
    }
    state.savedText = area.value;
    state.savedName = nameInput.value;
    say(document.querySelector("main h1"), `Workflow “${saved.name}”`);
    document.title = `${saved.name} · Outdial`;
    say(statusLine, "Saved.");
    await validate();
  } catch (err) {
    say(statusLine, "");
    showFailure(err);
  } finally {
    setBusy(false);
  }
});

async function validate() {
  const res = await send("POST", `/api/v1/workflow/${workflowID}/validate`);
  state.problems = (res.errors || []).map((p) => ({
    kind: p.kind || "", id: p.id ?? "", field: p.field ?? "", loc: "", message: String(p.message),
  }));
  const stale = dirty() ? " Your unsaved changes are not checked: save to check them." : "";
  if (res.is_valid) {
    say(result, "The saved definition is valid." + stale);
    result.className = "wf-valid";
  } else {
    say(result, `The saved definition has ${state.problems.length} problem(s).` + stale);
    result.className = "error";
  }
  await render();
}

if (validateForm) {
  validateForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (state.busy) return;
    clearMessages();
    setBusy(true);
    say(result, "Validating…");
    result.className = "";
    try {
      await validate();
    } catch (err) {
      say(result, "");
      showFailure(err);
    } finally {
      setBusy(false);
    }
  });
}

refresh();
