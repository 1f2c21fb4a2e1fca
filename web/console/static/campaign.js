// Keeps the campaign page live from the campaign's event stream
// (GET /api/v1/campaign/{id}/events, API.md 10): snapshots set the counters,
// the progress bar, the in-flight gauge, the outcome bars, the calls per
// minute, the abandoned calls' rates and the state (with the buttons it
// allows); log events go on top of the log list; call events update the
// calls table's rows and the answer-to-first-audio histogram. EventSource
// reconnects by itself (with Last-Event-ID, so no log entry is lost); the
// page closes the stream once the campaign's state is final.
//
// The state buttons send the API's operation (with the CSRF header) and
// show the state it answers at once; without scripts they are forms of the
// console's own routes.
import { api, percent, setText } from "./console.js";
import { LogList, ago, localTime, showReasons } from "./campaign_panels.js";
import { Series, seedLimit } from "./campaign_series.js";
import { AbandonCard, firstAudioCell } from "./campaign_abandoned.js";

const root = document.getElementById("campaign");
const base = `/api/v1/campaign/${encodeURIComponent(root.dataset.campaignId)}`;
const finalStates = new Set(["completed", "cancelled", "failed"]);
const field = (name, within = root) => within.querySelector(`[data-field="${name}"]`);
const words = new Map(
  [...field("words").querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]),
);

let state = root.dataset.state;
const redialed = root.dataset.redialed === "true";
let blockedBy = [];
let blockedKey = null;

/** Whether the state allows op (API.md 4.4), as campaign.go's allowed. */
function allowed(op, st) {
  switch (op) {
    case "start":
      return st === "draft";
    case "pause":
      return st === "running";
    case "resume":
      return st === "paused";
    case "cancel":
    case "edit":
      return st === "draft" || st === "running" || st === "paused";
    case "redial":
      return (st === "completed" || st === "cancelled") && !redialed;
  }
  return false;
}

function applyState(st) {
  if (typeof st !== "string" || !st) return;
  const changed = st !== state;
  state = st;
  root.dataset.state = st;
  const badge = field("campaign_state");
  setText(badge, st);
  badge.className = "state state-" + st.replace(/[^a-z_]/g, "");
  for (const form of root.querySelectorAll("form[data-op]")) form.hidden = !allowed(form.dataset.op, st);
  // A role that may not change the campaign gets neither section.
  for (const [name, op] of [["settings", "edit"], ["redial", "redial"]]) {
    const section = field(name);
    if (section) section.hidden = !allowed(op, st);
  }
  if (changed && finalStates.has(st)) diagnosis.now();
  else if (changed) diagnosis.soon();
}

function notice(text) {
  const p = field("notice");
  setText(p, text);
  p.hidden = !text;
}

// --- counters -------------------------------------------------------------

const num = (v) => (Number.isFinite(v) ? v : null);

function onSnapshot(s) {
  applyState(s.state);
  for (const name of ["total_rows", "processed_rows", "failed_rows", "executed_count", "in_flight", "max_concurrency", "calls_last_minute"]) {
    if (num(s[name]) !== null) setText(field(name), s[name]);
  }
  const total = num(s.total_rows), done = num(s.processed_rows), flying = num(s.in_flight);
  if (total !== null && done !== null) {
    const bar = field("progress");
    bar.max = total;
    bar.value = done;
    const pct = percent(done, total) + "%";
    setText(bar, pct);
    setText(field("percent"), pct);
    if (flying !== null) setText(field("queued"), Math.max(0, total - done - flying));
  }
  const meter = field("in_flight_meter");
  if (num(s.max_concurrency) !== null) meter.max = s.max_concurrency;
  if (flying !== null) {
    meter.value = flying;
    setText(meter, flying);
  }
  const next = field("next_dial");
  next.hidden = !s.next_dial_at;
  if (s.next_dial_at) setText(field("next_dial_at"), localTime(s.next_dial_at));
  showOutcomes(s.outcomes);
  abandon.rates(s.abandoned_rate_24h);
  series.add(num(s.calls_last_minute), Date.now());
  if (Array.isArray(s.blocked_by)) {
    blockedBy = s.blocked_by.filter((c) => typeof c === "string");
    const key = [...blockedBy].sort().join(",");
    if (key !== blockedKey) {
      blockedKey = key;
      diagnosis.soon();
    }
  }
  if (finalStates.has(s.state)) stop();
}

function showOutcomes(outcomes) {
  if (!outcomes || typeof outcomes !== "object") return;
  const items = [...field("outcomes").querySelectorAll("li[data-outcome]")];
  const total = items.reduce((n, li) => n + (num(outcomes[li.dataset.outcome]) || 0), 0);
  for (const li of items) {
    const n = num(outcomes[li.dataset.outcome]) || 0;
    const share = total > 0 ? (n * 100) / total : 0;
    setText(field("count", li), n);
    li.querySelector(".fill").style.width = share.toFixed(2) + "%";
    li.title = `${n} of ${total} calls (${Math.round(share)}%)`;
  }
}

// --- diagnosis ------------------------------------------------------------

// Asked again when blocked_by or the state changes, at most every 3 s (it
// reads the queue), and when a reason's until time passes.
const diagnosis = {
  last: 0,
  timer: 0,
  soon() {
    if (this.timer) return;
    const wait = Math.max(0, this.last + 3000 - Date.now());
    this.timer = setTimeout(() => this.fetch(), wait);
  },
  /** Asks at once: the state is final, nothing changes after this. */
  now() {
    clearTimeout(this.timer);
    this.fetch();
  },
  async fetch() {
    this.timer = 0;
    this.last = Date.now();
    try {
      const d = await api("GET", `${base}/diagnosis`);
      showReasons(field("reasons"), words, d, blockedBy);
      const untils = (d.reasons || []).map((r) => new Date(r.until).getTime()).filter((t) => t > Date.now());
      if (untils.length && !finalStates.has(state)) {
        setTimeout(() => this.soon(), Math.min(...untils) - Date.now() + 1000);
      }
    } catch {
      // no dialer (503) or a network error: the reasons shown stay
    }
  },
};

// --- logs and calls -------------------------------------------------------

const logs = new LogList(field("logs"));
const abandon = new AbandonCard(field("abandon"));
let callsSince = 0;

function onCall(c) {
  abandon.call(c);
  const tr = root.querySelector(`tr[data-call-id="${Number(c.id)}"]`);
  if (!tr) {
    callsSince++;
    setText(field("calls_since_count"), callsSince);
    field("calls_since").hidden = false;
    return;
  }
  setText(field("state", tr), c.state);
  setText(field("outcome", tr), c.outcome ?? "");
  if (num(c.duration_seconds) !== null) setText(field("duration", tr), c.duration_seconds);
  firstAudioCell(field("first_audio", tr), c);
  const started = field("started", tr);
  if (started && typeof c.started_at === "string") {
    // A row shown while queued has no start yet: the event brings it.
    const time = document.createElement("time");
    time.dateTime = c.started_at;
    time.textContent = ago(c.started_at);
    time.title = localTime(c.started_at);
    started.replaceChildren(time);
  }
}

/** Asks for the entries written between the page's render and the stream. */
async function catchUpLogs() {
  const q = new URLSearchParams({ limit: "100" });
  if (logs.newest) q.set("after", new Date(new Date(logs.newest).getTime() - 1).toISOString());
  try {
    const page = await api("GET", `${base}/logs?${q}`);
    for (const entry of page.logs || []) logs.add(entry);
  } catch {
    // the stream's entries still come
  }
}

// --- the series -----------------------------------------------------------

const series = new Series(field("series"), {
  peak: field("series_peak"),
  from: field("series_from"),
  note: field("series_note"),
});

async function seedSeries() {
  const placed = Number(field("executed_count").textContent);
  if (!(placed <= seedLimit)) {
    series.note("Shown from when this page was opened.");
    return;
  }
  try {
    const page = await api("GET", `${base}/calls?state=done&limit=${seedLimit + 100}`);
    const ended = (page.calls || []).map((c) => new Date(c.ended_at).getTime());
    if (series.seed(ended, Date.now()) > 0) {
      series.note("Paler bars: worked out from the calls that ended before this page was opened.");
    } else {
      series.note("No call ended in the 15 minutes before this page was opened.");
    }
  } catch {
    series.note("Shown from when this page was opened.");
  }
}

// --- the stream -----------------------------------------------------------

let events = null;
let ended = false; // the campaign reached a final state: no stream any more
const ticker = setInterval(() => series.tick(Date.now()), 10_000);

function stop() {
  ended = true;
  if (events) events.close();
  events = null;
  clearInterval(ticker);
}

function listen(source, name, handle) {
  source.addEventListener(name, (e) => {
    let data;
    try {
      data = JSON.parse(e.data);
    } catch {
      return; // an event that does not parse changes nothing
    }
    handle(data);
  });
}

// openStream follows the campaign's events; the log entries written
// before it opened are fetched once it is open (logs.add drops repeats).
function openStream() {
  events = new EventSource(`${base}/events`);
  events.addEventListener("open", catchUpLogs, { once: true });
  listen(events, "campaign", onSnapshot);
  listen(events, "log", (entry) => logs.add(entry));
  listen(events, "call", onCall);
}

if ("EventSource" in window) {
  openStream();
  window.addEventListener("pagehide", stop);
  // A hidden tab lets go of its stream: a browser holds 6 connections per
  // site over HTTP/1.1, and each open page's stream keeps one. Shown
  // again, the page follows the campaign anew (the next snapshot brings
  // every counter up to date).
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && events) {
      events.close();
      events = null;
    } else if (!document.hidden && !events && !ended) {
      openStream();
    }
  });
}
seedSeries();

// --- the buttons ----------------------------------------------------------

for (const form of root.querySelectorAll("form[data-op]")) {
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const op = form.dataset.op;
    if (op === "cancel" && !confirm("Cancel this campaign? No new calls are placed; calls in flight finish.")) return;
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const c = await api("POST", `${base}/${op}`);
      notice("");
      applyState(c.state);
    } catch (err) {
      notice(err.message);
    } finally {
      button.disabled = false;
    }
  });
}
