// The workflow definition as the editor shows it: the nodes and edges read
// from the JSON (whatever their shape), where a problem belongs (a
// validation error's kind, id and field, or a 422 problem's loc), and the
// syntax error of JSON that does not parse.

/** Reads a definition (any JSON value) into {nodes, edges}. */
export function readModel(def) {
  const obj = def && typeof def === "object" && !Array.isArray(def) ? def : {};
  const nodes = (Array.isArray(obj.nodes) ? obj.nodes : []).map((n, index) => readNode(n, index));
  const edges = (Array.isArray(obj.edges) ? obj.edges : []).map((e, index) => readEdge(e, index));
  const byID = new Map();
  for (const n of nodes) if (n.id !== "" && !byID.has(n.id)) byID.set(n.id, n.index);
  for (const e of edges) {
    e.from = byID.has(e.source) ? byID.get(e.source) : -1;
    e.to = byID.has(e.target) ? byID.get(e.target) : -1;
  }
  return { nodes, edges, byID };
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function text(v) {
  if (typeof v === "string") return v;
  if (v === undefined || v === null) return "";
  return JSON.stringify(v);
}

function readNode(n, index) {
  const ok = isObject(n);
  const data = ok && isObject(n.data) ? n.data : {};
  const pos = ok && isObject(n.position) ? n.position : null;
  return {
    index,
    ok,
    id: ok && typeof n.id === "string" ? n.id : "",
    type: ok ? text(n.type) : "",
    name: text(data.name),
    prompt: text(data.prompt),
    position: pos && Number.isFinite(pos.x) && Number.isFinite(pos.y) ? { x: pos.x, y: pos.y } : null,
  };
}

function readEdge(e, index) {
  const ok = isObject(e);
  const data = ok && isObject(e.data) ? e.data : {};
  return {
    index,
    ok,
    id: ok && typeof e.id === "string" ? e.id : "",
    source: ok && typeof e.source === "string" ? e.source : "",
    target: ok && typeof e.target === "string" ? e.target : "",
    label: text(data.label),
    condition: text(data.condition),
  };
}

/**
 * Places each problem on the node or edge it names. A problem is
 * {kind, id, field, loc, message}: a validation error (API.md 5.2) names
 * its element by id, or, for an element without a usable id, by the index
 * in "Node at index N ..." (the errors of one element follow each other, in
 * the order of the arrays); a 422 problem's loc ("body.workflow_definition.
 * nodes.3.data.name") names the index. Returns {nodes: Map(index → [p]),
 * edges: Map(index → [p]), rest: [p]}.
 */
export function placeProblems(problems, model) {
  const out = { nodes: new Map(), edges: new Map(), rest: [] };
  const lists = { node: model.nodes, edge: model.edges };
  const cursor = { node: 0, edge: 0 };
  const ids = { node: indexesByID(model.nodes), edge: indexesByID(model.edges) };
  for (const p of problems) {
    let kind = p.kind;
    let index = -1;
    if (p.loc) {
      [kind, index] = fromLoc(p.loc);
    } else if (kind === "node" || kind === "edge") {
      index = fromError(p, cursor[kind], ids[kind]);
    }
    if ((kind === "node" || kind === "edge") && index >= 0 && index < lists[kind].length) {
      cursor[kind] = index;
      const m = kind === "node" ? out.nodes : out.edges;
      if (!m.has(index)) m.set(index, []);
      m.get(index).push(p);
    } else {
      out.rest.push(p);
    }
  }
  return out;
}

function indexesByID(list) {
  const m = new Map();
  for (const el of list) {
    if (el.id.trim() === "") continue;
    if (!m.has(el.id)) m.set(el.id, []);
    m.get(el.id).push(el.index);
  }
  return m;
}

const atIndex = /^(?:Node|Edge) at index (\d+)/;

// fromError returns the index of the element a validation error is about.
function fromError(p, cursor, ids) {
  const m = atIndex.exec(p.message || "");
  if (m) return Number(m[1]);
  if (!p.id) return cursor; // the element of the "at index" error before it
  const cands = ids.get(p.id);
  if (!cands) return -1;
  // A duplicate id is reported on the later elements that repeat it.
  const pool = /^Duplicate/.test(p.message || "") && cands.length > 1 ? cands.slice(1) : cands;
  return pool.find((i) => i >= cursor) ?? pool[0];
}

// fromLoc reads [kind, index] from a 422 problem's dotted loc.
function fromLoc(loc) {
  const parts = loc.split(".");
  const k = parts.indexOf("workflow_definition");
  if (k < 0) return ["", -1];
  const list = parts[k + 1];
  const index = Number(parts[k + 2]);
  if ((list === "nodes" || list === "edges") && Number.isInteger(index)) return [list.slice(0, -1), index];
  return ["", -1];
}

/** Where a problem is, in words ("node n2, data.prompt"). */
export function where(p) {
  if (p.loc) return p.loc;
  if (!p.kind) return "";
  return p.kind + (p.id ? " " + p.id : "") + (p.field ? ", " + p.field : "");
}

/**
 * Finds where JSON text that JSON.parse refused goes wrong (engines do not
 * all name a position): {index (0-based, in characters), line, column,
 * message}.
 */
export function syntaxError(err, source) {
  let found = scan(source);
  if (!found) {
    // The scanner and the engine disagree: take the engine's word.
    const msg = String(err && err.message ? err.message : err);
    const pos = /at position (\d+)/.exec(msg);
    found = { index: pos ? Math.min(Number(pos[1]), source.length) : source.length, message: msg };
  }
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf("\n"); i !== -1 && i < found.index; i = source.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { index: found.index, line, column: found.index - lineStart + 1, message: found.message };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

// scan walks JSON text without building anything (a stack, no recursion:
// any nesting depth) and returns its first error {index, message}, or null
// when it is one valid JSON value.
function scan(s) {
  const n = s.length;
  const stack = [];
  let i = 0;
  let expect = "value"; // value, valueOrEnd, key, keyOrEnd, colon, commaOrEnd, done
  const fail = (message) => ({ index: Math.min(i, n), message });
  const what = () => (i >= n ? "the end of the text" : `'${s[i]}'`);
  const after = () => {
    expect = stack.length ? "commaOrEnd" : "done";
  };
  const string = () => {
    for (i++; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 32) return false;
      if (c === 92) {
        i++;
        if (s[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(i + 1, i + 5))) return false;
          i += 4;
        } else if (!'"\\/bfnrt'.includes(s[i]) || i >= n) {
          return false;
        }
      }
    }
    return false;
  };
  for (;;) {
    while (i < n && " \t\n\r".includes(s[i])) i++;
    if (i >= n) return expect === "done" ? null : fail("Unexpected end of the JSON text");
    const c = s[i];
    switch (expect) {
      case "done":
        return fail("Unexpected text after the JSON value");
      case "colon":
        if (c !== ":") return fail(`Expected ':' after the property name, found ${what()}`);
        i++;
        expect = "value";
        continue;
      case "commaOrEnd": {
        const end = stack[stack.length - 1] === "{" ? "}" : "]";
        if (c === ",") {
          i++;
          expect = end === "}" ? "key" : "value";
        } else if (c === end) {
          stack.pop();
          i++;
          after();
        } else {
          return fail(`Expected ',' or '${end}', found ${what()}`);
        }
        continue;
      }
      case "key":
      case "keyOrEnd":
        if (c === "}" && expect === "keyOrEnd") {
          stack.pop();
          i++;
          after();
          continue;
        }
        if (c !== '"') return fail(`Expected a double-quoted property name, found ${what()}`);
        if (!string()) return fail("Bad string: an unescaped control character, a bad escape or no closing quote");
        expect = "colon";
        continue;
    }
    // A value (or, first in an array, its end).
    if (c === "]" && expect === "valueOrEnd") {
      stack.pop();
      i++;
      after();
    } else if (c === "{" || c === "[") {
      stack.push(c);
      i++;
      expect = c === "{" ? "keyOrEnd" : "valueOrEnd";
    } else if (c === '"') {
      if (!string()) return fail("Bad string: an unescaped control character, a bad escape or no closing quote");
      after();
    } else if (s.startsWith("true", i) || s.startsWith("null", i)) {
      i += 4;
      after();
    } else if (s.startsWith("false", i)) {
      i += 5;
      after();
    } else {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(s)) return fail(`Expected a value, found ${what()}`);
      i = NUMBER.lastIndex;
      after();
    }
  }
}
