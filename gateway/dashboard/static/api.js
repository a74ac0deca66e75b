// Mithril dashboard: the one JSON client both tabs use (dashboard.js, memory.js). The admin
// session cookie rides along; nothing is cached; errors arrive in the gateway's OpenAI-style
// envelope and are thrown with their message and HTTP status. A 401 or 403 means the session
// ended or the dashboard was disabled: the page reloads into the login form.
"use strict";

(function () {
  async function api(path, options) {
    const init = {
      method: (options && options.method) || "GET",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      cache: "no-store",
    };
    if (options && options.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    const response = await fetch(path, init);
    if (response.status === 401 || response.status === 403) {
      window.location.reload();
      throw new Error("signed out");
    }
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) {
      const message = body && body.error && body.error.message;
      const error = new Error(message || "HTTP " + response.status);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  window.mithril = Object.assign(window.mithril || {}, { api });
})();
