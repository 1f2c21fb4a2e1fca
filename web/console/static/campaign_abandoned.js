// The campaign page's "Abandoned calls" card (campaign.html): the
// snapshots' abandoned_rate_24h moves the two meters, and every call event
// of a call a person answered adds it to the answer-to-first-audio
// histogram (a call counted already moves to its new bucket: a late first
// audio). Every value is set with textContent.
import { setText } from "./console.js";

const warnShare = 2 / 3; // as campaign_abandoned.go's abandonWarnShare

/** "1.8 %": share as a percentage with at most one decimal. */
function percentText(share) {
  return (Math.round(share * 1000) / 10).toString() + " %";
}

/** How rate stands against maxRate: none, ok, warn or over. */
export function rateLevel(rate, maxRate) {
  if (!Number.isFinite(rate)) return "none";
  if (rate > maxRate) return "over";
  if (rate >= maxRate * warnShare) return "warn";
  return "ok";
}

/** The bucket index of a wait of ms (null: never) among the list's items. */
function bucketOf(froms, ms) {
  const never = froms.length - 1;
  if (!Number.isFinite(ms)) return never;
  for (let i = never - 1; i > 0; i--) if (ms >= froms[i]) return i;
  return 0;
}

export class AbandonCard {
  /** section is the card (data-field="abandon"); null: no card. */
  constructor(section) {
    this.section = section;
    if (!section) return;
    this.maxRate = Number(section.dataset.maxRate) || 0.03;
    this.items = [...section.querySelectorAll('[data-field="first_audio"] li')];
    this.froms = this.items.map((li) => Number(li.dataset.from));
    this.counts = this.items.map((li) => Number(li.querySelector('[data-field="bucket_count"]').textContent) || 0);
    this.counted = new Map();
    const list = section.querySelector('[data-field="first_audio"]');
    for (const pair of (list.dataset.counted || "").split(",")) {
      const [id, b] = pair.split(":");
      if (id) this.counted.set(id, Number(b));
    }
  }

  /** Shows abandoned_rate_24h {campaign, organization} of a snapshot. */
  rates(r) {
    if (!this.section || !r || typeof r !== "object") return;
    for (const div of this.section.querySelectorAll(".rate[data-scope]")) {
      const rate = r[div.dataset.scope];
      const known = Number.isFinite(rate);
      const level = rateLevel(known ? rate : NaN, this.maxRate);
      div.dataset.level = level;
      div.className = "rate rate-" + level;
      div.querySelector('[data-field="rate_known"]').hidden = !known;
      div.querySelector('[data-field="rate_none"]').hidden = known;
      const meter = div.querySelector('[data-field="rate_meter"]');
      meter.hidden = !known;
      if (!known) continue;
      const text = percentText(rate);
      setText(div.querySelector('[data-field="rate"]'), text);
      meter.value = Math.min(rate, 2 * this.maxRate);
      setText(meter, text);
    }
  }

  /** Counts call event c when a person answered it and it ended. */
  call(c) {
    if (!this.section || !c || c.state !== "done" || typeof c.abandoned !== "boolean") return;
    const id = String(c.id);
    const b = bucketOf(this.froms, c.answer_to_first_audio_ms);
    const was = this.counted.get(id);
    if (was === b) return;
    if (was !== undefined) this.counts[was]--;
    this.counts[b]++;
    this.counted.set(id, b);
    this.draw();
  }

  draw() {
    const total = this.counts.reduce((n, x) => n + x, 0);
    this.items.forEach((li, i) => {
      const bar = li.querySelector('[data-field="bucket_bar"]');
      bar.max = Math.max(total, 1);
      bar.value = this.counts[i];
      setText(bar, this.counts[i]);
      setText(li.querySelector('[data-field="bucket_count"]'), this.counts[i]);
    });
    const sample = this.section.querySelector('[data-field="first_audio_sample"]');
    if (sample) {
      setText(sample, total);
    } else {
      const empty = this.section.querySelector('[data-field="first_audio_empty"]');
      if (empty) setText(empty, `${total} calls answered by a person.`);
    }
  }
}

/** The calls table's cell of call c: "0.74 s", "never", "" and whether abandoned. */
export function firstAudioCell(td, c) {
  if (!td || typeof c.abandoned !== "boolean") return;
  let text = Number.isFinite(c.answer_to_first_audio_ms) ? (c.answer_to_first_audio_ms / 1000).toFixed(2) + " s" : "never";
  if (c.abandoned) text += " · abandoned";
  setText(td, text);
  td.classList.toggle("abandoned", c.abandoned);
}
