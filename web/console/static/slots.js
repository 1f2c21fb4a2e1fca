// The slot editor of the new-campaign form: rows of hours (days of week,
// from, until), added from the page's <template id="slot-template"> and
// removed by their button. Fields are named slot-N-day, slot-N-start and
// slot-N-end with N the row's position, renumbered after every change, so
// the server reads the rows in the order the page shows them.

/** The most rows the editor takes (the API takes at most 50 slots). */
const maxRows = 50;

/** Renames every slot-N- prefix in the row's ids, names and references. */
function renumber(row, i) {
  for (const el of row.querySelectorAll("[id], [name], [for], [aria-describedby]")) {
    for (const attr of ["id", "name", "for", "aria-describedby"]) {
      const v = el.getAttribute(attr);
      if (v) el.setAttribute(attr, v.replace(/slot-\d+-/g, `slot-${i}-`));
    }
  }
  const number = row.querySelector("[data-slot-number]");
  if (number) number.textContent = String(i + 1);
  const remove = row.querySelector("[data-remove-slot]");
  if (remove) remove.setAttribute("aria-label", `Remove hours ${i + 1}`);
}

/**
 * Wires the editor inside root: the list ([data-slot-list]), its add
 * button ([data-add-slot]) and the template of a new row.
 */
export function initSlots(root) {
  const list = root.querySelector("[data-slot-list]");
  const add = root.querySelector("[data-add-slot]");
  const tpl = document.getElementById("slot-template");
  if (!list || !add || !tpl) return;

  const rows = () => [...list.querySelectorAll("[data-slot]")];
  const refresh = () => {
    rows().forEach(renumber);
    add.disabled = rows().length >= maxRows;
  };

  add.addEventListener("click", () => {
    if (rows().length >= maxRows) return;
    const row = tpl.content.querySelector("[data-slot]").cloneNode(true);
    list.append(row);
    refresh();
    const first = row.querySelector("input");
    if (first) first.focus();
  });

  list.addEventListener("click", (e) => {
    const button = e.target.closest("[data-remove-slot]");
    if (!button) return;
    const row = button.closest("[data-slot]");
    const next = row.nextElementSibling || row.previousElementSibling;
    row.remove();
    refresh();
    // Focus stays in the editor: the next row's remove button, else "Add hours".
    const target = next ? next.querySelector("[data-remove-slot]") : add;
    target.focus();
  });

  refresh();
}
