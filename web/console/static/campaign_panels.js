// The campaign page's lists: the newest log entries (live entries on top,
// at most maxLogs, none twice) and the diagnosis in plain words. Every
// value is set with textContent.

const maxLogs = 100;

/** Formats an RFC 3339 time as the browser's local date and time. */
export function localTime(ts) {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts ?? "") : d.toLocaleString();
}

/** "just now", "5 min ago", "3 h ago", "2 days ago": how long ago ts was, as the server's ago. */
export function ago(ts) {
  const ms = Date.now() - new Date(ts).getTime();
  if (!Number.isFinite(ms)) return "";
  if (ms < 60_000) return "just now";
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ago`;
  if (ms < 48 * 3_600_000) return `${Math.floor(ms / 3_600_000)} h ago`;
  return `${Math.floor(ms / 86_400_000)} days ago`;
}

/** "in 3 min", "in 40 s", "now": how far in the future ts is. */
function fromNow(ts) {
  const ms = new Date(ts).getTime() - Date.now();
  if (!Number.isFinite(ms) || ms <= 1000) return "now";
  if (ms < 60_000) return `in ${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `in ${Math.round(ms / 60_000)} min`;
  return `in ${Math.round(ms / 3_600_000)} h`;
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = String(text);
  return e;
}

/** The log list ol: adds entries, each once, newest on top. */
export class LogList {
  constructor(ol) {
    this.ol = ol;
    this.seen = new Set();
    this.newest = "";
    for (const li of ol.querySelectorAll("li.log")) {
      const time = li.querySelector("time");
      const ts = time ? time.getAttribute("datetime") : "";
      if (time) time.textContent = localTime(ts);
      this.remember(ts, text(li, ".event"), text(li, ".msg"));
    }
  }

  remember(ts, event, message) {
    this.seen.add(`${ts}|${event}|${message}`);
    if (ts > this.newest) this.newest = ts;
  }

  /** Adds entry {ts, level, event, message, details} on top, unless shown. */
  add(entry) {
    if (!entry || typeof entry.ts !== "string") return;
    const key = `${entry.ts}|${entry.event}|${entry.message}`;
    if (this.seen.has(key)) return;
    this.remember(entry.ts, entry.event, entry.message);
    const li = el("li", "log log-" + String(entry.level).replace(/[^a-z]/g, ""));
    const time = el("time", "", localTime(entry.ts));
    time.setAttribute("datetime", entry.ts);
    li.append(time, " ", el("span", "event", entry.event), " ", el("span", "msg", entry.message));
    const details = detailsText(entry.details);
    if (details) li.append(" ", el("span", "details", details));
    for (const empty of this.ol.querySelectorAll("li.empty")) empty.remove();
    this.ol.prepend(li);
    while (this.ol.children.length > maxLogs) this.ol.lastElementChild.remove();
  }
}

function text(root, sel) {
  const e = root.querySelector(sel);
  return e ? e.textContent : "";
}

/** details as "key=value" pairs in key order, as the page's server does. */
function detailsText(details) {
  if (!details || typeof details !== "object") return "";
  return Object.keys(details)
    .sort()
    .map((k) => {
      const v = details[k];
      return `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`;
    })
    .join(" ");
}

/**
 * Shows the diagnosis d (GET .../diagnosis, or null) in ul: each reason's
 * sentence (words maps codes to sentences), its message, count and until;
 * then the codes of blockedBy the diagnosis does not list yet.
 */
export function showReasons(ul, words, d, blockedBy) {
  const items = [];
  const listed = new Set();
  for (const r of (d && Array.isArray(d.reasons) ? d.reasons : [])) {
    listed.add(r.code);
    const li = el("li");
    li.dataset.code = r.code;
    li.append(el("strong", "", words.get(r.code) || r.message));
    const parts = [r.message];
    if (Number.isFinite(r.count)) parts.push(`${r.count} contacts`);
    if (r.until) parts.push(`until ${localTime(r.until)} (${fromNow(r.until)})`);
    li.append(" ", el("span", "sub", parts.join(" · ")));
    items.push(li);
  }
  for (const code of blockedBy || []) {
    if (listed.has(code)) continue;
    const li = el("li");
    li.dataset.code = code;
    li.append(el("strong", "", words.get(code) || code));
    items.push(li);
  }
  if (items.length === 0) {
    items.push(el("li", "", d && d.dialing ? "Dialing: nothing holds calls back." : "Nothing holds calls back."));
  }
  ul.replaceChildren(...items);
}
