// Shared helpers of the console's modules. Data is put on a page with
// textContent alone (never parsed as HTML), so user data stays text.

/** The session's CSRF token, from <meta name="csrf-token">; "" signed out. */
export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

/** An API error: the status and the contract's detail. */
export class APIError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

/**
 * Calls the public API with the session cookie; requests that change
 * something carry the CSRF token. Resolves to the decoded JSON (null for an
 * empty answer); rejects with an APIError for an answer of 400 or more. A
 * 401 means the session ended: the browser goes to the sign-in page.
 */
export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (res.status === 401) {
    location.assign("/console/sign-in?next=" + encodeURIComponent(location.pathname + location.search));
  }
  if (!res.ok) throw new APIError(res.status, data && data.detail !== undefined ? data.detail : res.statusText);
  return data;
}

/** Sets the text of the element el (when there is one) to value. */
export function setText(el, value) {
  if (el) el.textContent = String(value);
}

/** Percent of part in whole, 0..100, rounded down (0 when whole is 0). */
export function percent(part, whole) {
  if (!(whole > 0) || !(part > 0)) return 0;
  return Math.min(100, Math.floor((part * 100) / whole));
}
