// The telephony configuration form: the provider select switches the
// provider fields in place. The server renders the selected provider's
// fieldset in the form and every other provider's in a <template> after
// it (inert: not submitted, not validated, its labels not in the page);
// a switch swaps the live fieldset for the chosen provider's, keeping what
// was typed in each. Without JavaScript, the "Show its fields" button
// reloads the form with the chosen provider's fields.

const select = document.getElementById("provider");
const form = document.getElementById("config-form");
const providerValue = document.getElementById("provider-value");

if (select && form && providerValue) {
  const fieldsets = new Map();
  let live = form.querySelector("fieldset.provider-fields");
  if (live) fieldsets.set(live.dataset.provider, live);
  for (const t of document.querySelectorAll("template[data-provider]")) {
    const fs = t.content.querySelector("fieldset.provider-fields");
    if (fs) fieldsets.set(t.dataset.provider, document.importNode(fs, true));
  }
  for (const b of document.querySelectorAll("#provider-pick [data-nojs]")) b.hidden = true;

  select.addEventListener("change", () => {
    const next = fieldsets.get(select.value);
    if (!next || next === live) return;
    if (live) live.replaceWith(next);
    else form.querySelector(".actions-row").before(next);
    live = next;
    providerValue.value = select.value;
    const url = new URL(location.href);
    url.searchParams.set("provider", select.value);
    history.replaceState(null, "", url);
  });
  // The picker is a GET form of its own: with the script, pressing Enter
  // in it must not reload the page.
  document.getElementById("provider-pick").addEventListener("submit", (e) => e.preventDefault());
}
