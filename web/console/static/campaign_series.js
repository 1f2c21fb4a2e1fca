// The campaign page's "calls per minute" chart: a time series of the
// snapshots' calls_last_minute, one bar per 10 s over the last 15 minutes,
// drawn as plain elements whose heights are set here.
//
// Seed: when the campaign has placed at most seedLimit calls, the page asks
// the API once for its ended calls (GET .../calls?state=done) and works out
// the same figure (calls ended in the 60 s before each bar) for the 15
// minutes before the page opened; those bars are paler. A bigger campaign
// is not read call by call: its chart starts when the page opened.

const step = 10_000; // ms per bar
const slots = 90; // bars: 15 minutes
const minute = 60_000;

/** The most placed calls for which the series is seeded from the calls. */
export const seedLimit = 500;

/** One campaign's series, drawn into the element el. */
export class Series {
  constructor(el, labels) {
    this.el = el;
    this.labels = labels; // {peak, from, note}: elements (or null)
    this.points = []; // {slot, value, seed}, oldest first, one per slot
    this.bars = [];
    for (let i = 0; i < slots; i++) {
      const bar = document.createElement("span");
      this.el.append(bar);
      this.bars.push(bar);
    }
  }

  /**
   * Seeds the series from the end times (ms since the epoch) of every
   * ended call of the campaign, up to now; returns how many of them fall
   * in the chart's 15 minutes.
   */
  seed(endedAt, now) {
    const sorted = endedAt.filter(Number.isFinite).sort((a, b) => a - b);
    const current = Math.floor(now / step);
    const seeded = [];
    for (let slot = current - slots + 1; slot < current; slot++) {
      const end = (slot + 1) * step;
      seeded.push({ slot, value: countIn(sorted, end - minute, end), seed: true });
    }
    // Live points already taken win over seeded ones of the same slot.
    const live = new Set(this.points.map((p) => p.slot));
    this.points = seeded.filter((p) => !live.has(p.slot)).concat(this.points);
    this.points.sort((a, b) => a.slot - b.slot);
    this.draw(now);
    return sorted.filter((t) => t > now - slots * step && t <= now).length;
  }

  /** Records value (calls in the last minute) as of now. */
  add(value, now) {
    if (!Number.isFinite(value)) return;
    const slot = Math.floor(now / step);
    const last = this.points[this.points.length - 1];
    if (last && last.slot === slot) {
      last.value = value;
      last.seed = false;
    } else {
      this.points.push({ slot, value, seed: false });
    }
    this.points = this.points.filter((p) => p.slot > slot - slots);
    this.draw(now);
  }

  /** Carries the newest value into the current slot (time moves on). */
  tick(now) {
    const last = this.points[this.points.length - 1];
    if (last) this.add(last.value, now);
  }

  /** Says what the chart holds. */
  note(text) {
    if (this.labels.note) this.labels.note.textContent = text;
  }

  draw(now) {
    const current = Math.floor(now / step);
    const bySlot = new Map(this.points.map((p) => [p.slot, p]));
    const peak = this.points.reduce((m, p) => Math.max(m, p.value), 0);
    let carried = null;
    const first = this.points.length ? this.points[0].slot : current;
    for (let i = 0; i < slots; i++) {
      const slot = current - slots + 1 + i;
      const p = bySlot.get(slot) || (slot > first ? carried : null);
      if (bySlot.has(slot)) carried = p;
      const bar = this.bars[i];
      const value = p ? p.value : 0;
      bar.style.height = peak > 0 && p ? Math.max(1, (value * 100) / peak) + "%" : "0";
      bar.className = p && p.seed ? "seed" : "";
      bar.title = p ? `${new Date((slot + 1) * step).toLocaleTimeString()}: ${value} calls/min` : "";
    }
    if (this.labels.peak) this.labels.peak.textContent = String(peak);
    if (this.labels.from) {
      this.labels.from.textContent = new Date((current - slots + 1) * step).toLocaleTimeString();
    }
    this.el.setAttribute("aria-label", `Calls per minute over the last 15 minutes; peak ${peak}`);
  }
}

/** Counts the sorted times t with from < t <= to. */
function countIn(sorted, from, to) {
  let n = 0;
  for (const t of sorted) {
    if (t > to) break;
    if (t > from) n++;
  }
  return n;
}
