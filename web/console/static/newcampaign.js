// The new-campaign form (/console/campaigns/new). Choosing a CSV uploads it
// at once: the API presigns an upload (POST /api/v1/s3/presigned-upload-url,
// with the CSRF header), then the file goes straight to the object store
// with an XMLHttpRequest PUT whose upload progress drives the bar; the
// file_key lands in the hidden field source_id that the form posts. The
// module also fills the time zone list, keeps the rate's placeholder on
// the chosen configuration's default, and sends the form once.
import { api, APIError, setText } from "./console.js";
import { initSlots } from "./slots.js";

const form = document.getElementById("new-campaign");
if (form) init(form);

function init(form) {
  const file = document.getElementById("csv-file");
  const bar = document.getElementById("upload-progress");
  const pct = document.getElementById("upload-percent");
  const status = document.getElementById("upload-status");
  const sourceID = document.getElementById("source_id");
  const sourceName = document.getElementById("source_name");
  const sourceSize = document.getElementById("source_size");
  const csvProblems = document.getElementById("csv-problems");
  let uploading = null; // the XMLHttpRequest of the upload under way
  let submitted = false;

  const setProgress = (part, whole) => {
    const p = whole > 0 ? Math.min(100, Math.floor((part * 100) / whole)) : 0;
    bar.value = p;
    setText(bar, p + "%");
    setText(pct, p + "%");
  };
  const fail = (msg) => {
    status.classList.add("error");
    setText(status, msg);
    file.setAttribute("aria-invalid", "true");
  };

  file.addEventListener("change", () => {
    if (uploading) uploading.abort();
    const f = file.files && file.files[0];
    if (!f) return;
    upload(f);
  });

  async function upload(f) {
    // The key of an earlier file goes: a submit now would create the
    // campaign from a file the operator replaced.
    sourceID.value = sourceName.value = sourceSize.value = "";
    status.classList.remove("error");
    file.removeAttribute("aria-invalid");
    setProgress(0, 1);
    setText(pct, "");
    if (!/\.csv$/i.test(f.name)) return fail("Choose a .csv file (its name must end in .csv).");
    if (f.size === 0) return fail(`${f.name} is empty.`);
    setText(status, `Preparing the upload of ${f.name}…`);
    let presigned;
    try {
      presigned = await api("POST", "/api/v1/s3/presigned-upload-url",
        { file_name: f.name, file_size: f.size, content_type: "text/csv" });
    } catch (e) {
      return fail("The upload was refused: " + describe(e));
    }
    const target = new URL(presigned.upload_url, location.href);
    if (target.origin !== location.origin) {
      // connect-src 'self': the console's policy lets the page send data
      // to this site only. A remote object store (serve --s3-endpoint)
      // takes uploads through the API or its own tools instead.
      return fail(`The upload URL is on another site (${target.origin}); the console uploads only to this site. ` +
        "Upload the file with the API, or use the bundled object store.");
    }
    setText(status, `Uploading ${f.name}…`);
    try {
      await put(target.href, f);
    } catch (e) {
      return fail(`The upload of ${f.name} failed: ${e.message}`);
    }
    setProgress(1, 1);
    sourceID.value = presigned.file_key;
    sourceName.value = f.name;
    sourceSize.value = String(f.size);
    setText(status, `Uploaded ${f.name} (${size(f.size)}).`);
    if (csvProblems) csvProblems.hidden = true; // they were the earlier file's
  }

  // PUTs the file to the presigned URL: exactly Content-Type text/csv (a
  // signed header), the File as body (no charset added).
  function put(url, f) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      uploading = xhr;
      xhr.open("PUT", url);
      xhr.setRequestHeader("Content-Type", "text/csv");
      xhr.upload.addEventListener("progress", (e) => {
        if (e.lengthComputable) setProgress(e.loaded, e.total);
      });
      xhr.addEventListener("load", () => {
        uploading = null;
        if (xhr.status >= 200 && xhr.status < 300) resolve();
        else reject(new Error(s3Message(xhr) || `the object store answered ${xhr.status}`));
      });
      xhr.addEventListener("error", () => {
        uploading = null;
        reject(new Error("the connection failed"));
      });
      xhr.addEventListener("abort", () => {
        uploading = null;
        reject(new Error("it was cancelled"));
      });
      xhr.send(f);
    });
  }

  form.addEventListener("submit", (e) => {
    const say = document.getElementById("submit-status");
    if (uploading) {
      e.preventDefault();
      setText(say, "Wait for the upload to finish.");
      return;
    }
    if (submitted) {
      e.preventDefault(); // one campaign per click, however many clicks
      return;
    }
    submitted = true;
    form.setAttribute("aria-busy", "true");
    setText(say, "Creating the campaign…");
  });
  // Back from the campaign page (bfcache): the form can be sent again.
  window.addEventListener("pageshow", () => {
    submitted = false;
    form.removeAttribute("aria-busy");
  });

  fillTimezones();
  rateFollowsConfig();
  initSlots(document.getElementById("window"));
  const summary = document.getElementById("problem-summary");
  if (summary) summary.focus();
}

/** The time zones the browser knows, as suggestions; the browser's own by default. */
function fillTimezones() {
  const input = document.getElementById("schedule_timezone");
  const list = document.getElementById("timezones");
  if (!input || !list) return;
  let zones = [];
  try {
    zones = Intl.supportedValuesOf("timeZone");
  } catch {
    // an older browser: no suggestions
  }
  for (const z of zones) {
    const o = document.createElement("option");
    o.value = z;
    list.append(o);
  }
  if (!input.value) {
    // The browser's own zone, as the field's default (its value attribute).
    const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (own) input.defaultValue = own;
  }
}

/** The rate field's placeholder is the selected configuration's default. */
function rateFollowsConfig() {
  const select = document.getElementById("telephony_configuration_id");
  const rate = document.getElementById("rate_limit_per_second");
  if (!select || !rate) return;
  select.addEventListener("change", () => {
    const opt = select.selectedOptions[0];
    rate.placeholder = opt ? opt.dataset.rate || "" : "";
  });
}

/** An API error in words: the detail, or a 422's messages. */
function describe(e) {
  if (!(e instanceof APIError)) return e.message || String(e);
  if (Array.isArray(e.detail)) {
    return e.detail.map((p) => String(p.msg || "").replace(/^Value error, /, "")).join(" ");
  }
  return String(e.detail);
}

/** The <Message> of an S3 XML error answer, if it has one. */
function s3Message(xhr) {
  const doc = xhr.responseXML;
  const m = doc && doc.querySelector("Message");
  return m ? m.textContent : "";
}

/** A byte count in words. */
function size(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
