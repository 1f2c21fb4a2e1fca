// Importing a CSV into the suppression list: the file is uploaded straight
// to storage through a presigned URL (POST /api/v1/s3/presigned-upload-url,
// then PUT), with a progress bar; the form then posts the upload's key as
// source_id and the server shows what the import did.
import { api, APIError, setText } from "./console.js";

const form = document.getElementById("import-form");

/** A readable line for an error of the upload. */
function message(err) {
  if (err instanceof APIError) {
    if (Array.isArray(err.detail)) {
      return err.detail.map((p) => String(p.msg || "").replace(/^Value error, /, "")).join(" ");
    }
    return String(err.detail);
  }
  return err && err.message ? err.message : String(err);
}

/** PUTs file to url as text/csv, reporting progress to bar. */
function put(url, file, bar) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.setRequestHeader("Content-Type", "text/csv");
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) {
        bar.value = Math.floor((e.loaded * 100) / e.total);
        setText(bar, bar.value + "%");
      }
    });
    xhr.addEventListener("load", () =>
      xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error("the upload failed (HTTP " + xhr.status + ")")),
    );
    xhr.addEventListener("error", () => reject(new Error("the upload failed: the storage could not be reached")));
    xhr.send(file);
  });
}

if (form) {
  const input = document.getElementById("csv_file");
  const sourceID = form.querySelector('input[name="source_id"]');
  const bar = document.getElementById("upload-progress");
  const status = document.getElementById("upload-status");
  const button = form.querySelector('button[type="submit"]');

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = input.files && input.files[0];
    if (!file) {
      setText(status, "Choose a CSV file.");
      return;
    }
    button.disabled = true;
    bar.hidden = false;
    bar.value = 0;
    setText(status, "Uploading " + file.name + "…");
    try {
      const p = await api("POST", "/api/v1/s3/presigned-upload-url", {
        file_name: file.name,
        file_size: file.size,
        content_type: "text/csv",
      });
      await put(p.upload_url, file, bar);
      sourceID.value = p.file_key;
      setText(status, "Uploaded. Importing…");
      input.disabled = true; // the file itself is not posted again
      form.submit();
    } catch (err) {
      bar.hidden = true;
      button.disabled = false;
      setText(status, "The file was not imported: " + message(err));
      status.classList.add("error");
    }
  });
}
