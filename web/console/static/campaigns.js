// Keeps the campaigns list live: the organization's event stream
// (GET /api/v1/events) sends a snapshot of a campaign whenever it changes;
// the row of that campaign, when it is on this page, takes its counts.
import { percent, setText } from "./console.js";

const rows = new Map();
for (const tr of document.querySelectorAll("tr[data-campaign-id]")) {
  rows.set(tr.dataset.campaignId, tr);
}

function field(tr, name) {
  return tr.querySelector(`[data-field="${name}"]`);
}

function update(snap) {
  const tr = rows.get(String(snap.id));
  if (!tr) return;
  const state = field(tr, "state");
  if (state && typeof snap.state === "string") {
    setText(state, snap.state);
    state.className = "state state-" + snap.state.replace(/[^a-z_]/g, "");
  }
  for (const name of ["total_rows", "processed_rows", "failed_rows", "executed_count"]) {
    if (Number.isFinite(snap[name])) setText(field(tr, name), snap[name]);
  }
  const bar = field(tr, "progress");
  if (bar && Number.isFinite(snap.total_rows) && Number.isFinite(snap.processed_rows)) {
    bar.max = snap.total_rows;
    bar.value = snap.processed_rows;
    const pct = percent(snap.processed_rows, snap.total_rows) + "%";
    setText(bar, pct);
    setText(field(tr, "percent"), pct);
  }
}

if (rows.size > 0 && "EventSource" in window) {
  let events = null;
  const open = () => {
    events = new EventSource("/api/v1/events");
    events.addEventListener("campaign", (e) => {
      try {
        update(JSON.parse(e.data));
      } catch {
        // a snapshot that does not parse changes nothing
      }
    });
  };
  const close = () => {
    if (events) events.close();
    events = null;
  };
  open();
  window.addEventListener("pagehide", close);
  // A hidden tab lets go of its stream (a browser holds 6 connections per
  // site over HTTP/1.1); shown again, it gets a snapshot of each campaign.
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) close();
    else if (!events) open();
  });
}
