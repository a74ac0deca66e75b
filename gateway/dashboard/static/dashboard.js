// Mithril dashboard: live totals, filtered recent events, an event's findings; the tabs
// (Events, Memory: see memory.js, which listens for the "mithril:view" event).
// Vanilla JS, no dependencies. Every value from the API is rendered with textContent,
// never as HTML.
"use strict";

(function () {
  const POLL_MS = 4000;
  const PAGE = 100;
  const FILTERS = ["action", "severity", "detector", "tenant", "since"];
  const VIEWS = ["events", "memory"];

  const byId = (id) => document.getElementById(id);
  let nextBefore = null;
  let paged = false;
  let selected = null;
  let generation = 0; // drops answers to requests made before the filters last changed
  let view = "events";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function badge(value) {
    const name = value === null || value === undefined ? "none" : String(value);
    // The class is chosen from a fixed list, never taken from the data as is.
    const known = ["block", "redact", "allow", "critical", "high", "medium", "low", "none"];
    return el("span", "badge " + (known.includes(name) ? name : ""), name);
  }

  function setStatus(text, isError) {
    const status = byId("status");
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  const api = window.mithril.api; // api.js

  function filterParams() {
    const params = new URLSearchParams();
    for (const name of FILTERS) {
      const value = byId("f-" + name).value.trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  function saveFilters() {
    const params = filterParams();
    if (view !== "events") params.set("view", view);
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : window.location.pathname);
  }

  function restoreFilters() {
    const params = new URLSearchParams(window.location.hash.slice(1));
    for (const name of FILTERS) {
      if (params.has(name)) byId("f-" + name).value = params.get(name);
    }
    if (VIEWS.includes(params.get("view"))) view = params.get("view");
  }

  // -- tabs --------------------------------------------------------------------------

  function showView(name, remember) {
    view = VIEWS.includes(name) ? name : "events";
    for (const tab of document.querySelectorAll(".tabs .tab")) {
      const active = tab.dataset.view === view;
      tab.classList.toggle("active", active);
      tab.setAttribute("aria-selected", active ? "true" : "false");
    }
    for (const other of VIEWS) {
      const panel = byId("view-" + other);
      if (panel) panel.hidden = other !== view;
    }
    if (remember) saveFilters();
    document.dispatchEvent(new CustomEvent("mithril:view", { detail: { view } }));
  }

  function fmtTime(iso) {
    const date = new Date(iso);
    return isNaN(date) ? iso : date.toLocaleString();
  }

  function fmtNumber(n) {
    return typeof n === "number" ? n.toLocaleString() : "–";
  }

  // -- totals ------------------------------------------------------------------------

  function renderStats(stats) {
    const totals = stats.totals || {};
    const byAction = totals.by_action || {};
    byId("t-total").textContent = fmtNumber(totals.total);
    byId("t-block").textContent = fmtNumber(byAction.block || 0);
    byId("t-redact").textContent = fmtNumber(byAction.redact || 0);
    byId("t-allow").textContent = fmtNumber(byAction.allow || 0);
    byId("t-flagged").textContent = fmtNumber(totals.flagged);

    const severity = totals.by_severity || {};
    const order = ["critical", "high", "medium", "low", "none"];
    byId("t-severity").textContent =
      order
        .filter((name) => severity[name])
        .map((name) => name + " " + fmtNumber(severity[name]))
        .join(" · ") || "–";

    const health = stats.event_log;
    const card = byId("health-card");
    if (health) {
      byId("t-health").textContent =
        "written " + fmtNumber(health.written) +
        " · dropped " + fmtNumber(health.dropped) +
        " · queued " + fmtNumber(health.queue_depth);
      card.classList.toggle("bad", health.dropped > 0);
    } else {
      byId("t-health").textContent = "not running";
    }

    const tenants = byId("tenants");
    tenants.replaceChildren();
    for (const name of Object.keys(totals.by_tenant || {})) {
      const option = document.createElement("option");
      option.value = name;
      tenants.append(option);
    }
  }

  // -- events ------------------------------------------------------------------------

  function eventRow(event) {
    const row = el("tr", "event-row");
    row.dataset.decisionId = event.decision_id;
    row.dataset.action = event.action;
    row.dataset.severity = event.severity || "none";
    row.dataset.tenant = event.tenant;
    row.tabIndex = 0;
    if (event.decision_id === selected) row.classList.add("selected");
    const cell = (className, content) => {
      const td = el("td", className);
      if (content instanceof Node) td.append(content);
      else td.textContent = content === null || content === undefined ? "" : String(content);
      row.append(td);
    };
    cell("time", fmtTime(event.time));
    cell("tenant", event.tenant);
    cell("route", event.route);
    cell("direction", event.direction);
    cell("action", badge(event.action));
    cell("severity", badge(event.severity));
    cell("num score", Number(event.score).toFixed(2));
    cell("rules", (event.rule_ids || []).join(", "));
    cell("num latency", Number(event.latency_ms).toFixed(1));
    cell("excerpt", event.excerpt);
    row.title = (event.rule_ids || []).join(", ");
    row.addEventListener("click", () => showDetail(event.decision_id));
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") showDetail(event.decision_id);
    });
    return row;
  }

  async function loadEvents(append) {
    const mine = generation;
    const params = filterParams();
    params.set("limit", String(PAGE));
    if (append && nextBefore) params.set("before", nextBefore);
    const page = await api("/admin/api/events?" + params.toString());
    if (mine !== generation) return;
    const rows = byId("event-rows");
    const fresh = page.data.map(eventRow);
    if (append) rows.append(...fresh);
    else rows.replaceChildren(...fresh);
    nextBefore = page.next_before;
    byId("more").hidden = !page.has_more;
    byId("empty").hidden = rows.children.length > 0;
  }

  async function loadStats() {
    const since = byId("f-since").value;
    const query = since ? "?since=" + encodeURIComponent(since) : "";
    renderStats(await api("/admin/api/stats" + query));
  }

  async function refresh(withEvents) {
    try {
      const work = [loadStats()];
      if (withEvents) work.push(loadEvents(false));
      await Promise.all(work);
      setStatus("updated " + new Date().toLocaleTimeString());
    } catch (error) {
      setStatus("error: " + error.message, true);
    }
  }

  // -- detail ------------------------------------------------------------------------

  function field(list, name, value) {
    list.append(el("dt", "", name));
    const dd = el("dd");
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value === null || value === undefined || value === "" ? "–" : String(value);
    list.append(dd);
  }

  async function showDetail(decisionId) {
    selected = decisionId;
    for (const row of byId("event-rows").children) {
      row.classList.toggle("selected", row.dataset.decisionId === decisionId);
    }
    let event;
    try {
      event = await api("/admin/api/events/" + encodeURIComponent(decisionId));
    } catch (error) {
      setStatus("error: " + error.message, true);
      return;
    }
    if (selected !== decisionId) return;
    const fields = byId("detail-fields");
    fields.replaceChildren();
    field(fields, "Decision", event.decision_id);
    field(fields, "Time", fmtTime(event.time));
    field(fields, "Tenant", event.tenant);
    field(fields, "Route", event.route);
    field(fields, "Direction", event.direction);
    field(fields, "Action", badge(event.action));
    field(fields, "Mode", event.mode);
    field(fields, "Flagged", event.flagged ? "yes" : "no");
    field(fields, "Score", Number(event.score).toFixed(3));
    field(fields, "Severity", badge(event.severity));
    field(fields, "Detectors", (event.detectors || []).join(", "));
    field(fields, "Latency", Number(event.latency_ms).toFixed(2) + " ms");
    field(fields, "Model", event.model);
    field(fields, "Request id", event.request_id);
    if ((event.unavailable_services || []).length) {
      field(fields, "Unavailable", event.unavailable_services.join(", "));
    }
    byId("detail-excerpt").textContent = event.excerpt || "";

    const rows = byId("finding-rows");
    rows.replaceChildren();
    for (const finding of event.findings || []) {
      const row = el("tr", "finding-row");
      const where =
        finding.start === null || finding.start === undefined
          ? finding.view || ""
          : finding.view + " " + finding.start + "–" + finding.end;
      const rule = el("td", "rule", finding.rule_id);
      rule.append(el("span", "sub", [finding.detector, finding.category].filter(Boolean).join(" · ")));
      const severity = el("td", "severity");
      severity.append(badge(finding.severity));
      severity.append(el("span", "sub", Number(finding.confidence).toFixed(2)));
      const message = el("td", "message", finding.message);
      message.append(el("span", "sub", [where, finding.kind].filter(Boolean).join(" · ")));
      row.append(rule, severity, message);
      rows.append(row);
    }
    byId("detail-none").hidden = rows.children.length > 0;
    byId("findings").hidden = rows.children.length === 0;
    byId("detail").hidden = false;
  }

  function closeDetail() {
    selected = null;
    byId("detail").hidden = true;
    for (const row of byId("event-rows").children) row.classList.remove("selected");
  }

  // -- wiring ------------------------------------------------------------------------

  function filtersChanged() {
    generation += 1;
    paged = false;
    nextBefore = null;
    saveFilters();
    refresh(true);
  }

  function start() {
    restoreFilters();
    const form = byId("filters");
    form.addEventListener("change", filtersChanged);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      filtersChanged();
    });
    form.addEventListener("reset", () => setTimeout(filtersChanged, 0));
    byId("more").addEventListener("click", async () => {
      paged = true;
      try {
        await loadEvents(true);
      } catch (error) {
        setStatus("error: " + error.message, true);
      }
    });
    byId("detail-close").addEventListener("click", closeDetail);
    for (const tab of document.querySelectorAll(".tabs .tab")) {
      tab.addEventListener("click", () => {
        const wasEvents = view === "events";
        showView(tab.dataset.view, true);
        if (view === "events" && !wasEvents) refresh(byId("live").checked && !paged);
      });
    }
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") closeDetail();
    });
    showView(view, false);
    refresh(true);
    setInterval(() => {
      if (document.hidden || view !== "events") return;
      // Live: totals always; the table too unless the reader paged back into history.
      refresh(byId("live").checked && !paged);
    }, POLL_MS);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
