// Mithril dashboard, Memory tab: the quarantine review queue, each source's reputation over
// time, the audit log, and a decision's provenance (signals, weights, trust score, reasons,
// redacted kinds, findings). Vanilla JS, no dependencies, charts are inline SVG built here.
// Claims are untrusted text written by agents: every value from the API is rendered with
// textContent or as an SVG attribute, never as HTML.
"use strict";

(function () {
  const API = "/v1/memory";
  const PAGE = 50;
  const POLL_MS = 5000;
  const SIGNALS = ["reputation", "corroboration", "freshness", "contradiction", "danger"];
  const STATUSES = ["accept", "warn", "review", "quarantine", "reject"];
  const SVG_NS = "http://www.w3.org/2000/svg";
  const REVIEWER_KEY = "mithril.reviewer";

  const byId = (id) => document.getElementById(id);
  let started = false;
  let heldToken = "";
  let auditToken = "";
  let heldGeneration = 0;
  let auditGeneration = 0;
  let selected = null; // {kind: "held"|"audit", id}
  let openSource = null;
  let repGeneration = 0;
  let heldPaged = false;
  let auditPaged = false;

  // -- helpers -----------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      node.setAttribute(name, String(value));
    }
    return node;
  }

  function badge(value) {
    const name = value === null || value === undefined || value === "" ? "none" : String(value);
    // The class comes from a fixed list, never from the data as is.
    const known = [...STATUSES, "approve", "critical", "high", "medium", "low", "none"];
    return el("span", "badge " + (known.includes(name) ? "m-" + name : ""), name);
  }

  function fmtTime(iso) {
    if (!iso) return "–";
    const date = new Date(iso);
    return isNaN(date) ? String(iso) : date.toLocaleString();
  }

  function fmtScore(value, digits) {
    return typeof value === "number" && isFinite(value) ? value.toFixed(digits || 2) : "–";
  }

  function showError(message) {
    const box = byId("m-error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  const api = window.mithril.api; // api.js

  function cell(row, className, content) {
    const td = el("td", className);
    if (content instanceof Node) td.append(content);
    else td.textContent = content === null || content === undefined ? "" : String(content);
    row.append(td);
    return td;
  }

  // -- review queue ------------------------------------------------------------------

  function reviewer() {
    return byId("m-reviewer").value.trim();
  }

  function heldRow(held) {
    const row = el("tr", "held-row");
    row.dataset.id = held.id;
    row.dataset.status = held.status || "";
    row.tabIndex = 0;
    if (selected && selected.kind === "held" && selected.id === held.id) {
      row.classList.add("selected");
    }
    const decision = held.decision || {};
    cell(row, "time", fmtTime(held.create_time));
    cell(row, "source", held.source);
    cell(row, "status", badge(held.status));
    cell(row, "num trust", fmtScore(decision.trust_score));
    const claim = cell(row, "claim", held.claim);
    claim.title = held.claim || "";

    const actions = el("td", "actions");
    if (held.review_verdict) {
      actions.append(badge(held.review_verdict));
      actions.append(el("span", "sub", held.reviewer ? "by " + held.reviewer : ""));
    } else {
      const note = el("input", "note");
      note.type = "text";
      note.placeholder = "note (optional)";
      note.maxLength = 4000;
      note.setAttribute("aria-label", "Review note");
      const approve = el("button", "approve", "Approve");
      approve.type = "button";
      const reject = el("button", "reject", "Reject");
      reject.type = "button";
      const act = (verdict) => (e) => {
        e.stopPropagation();
        review(held.id, verdict, note.value, row, [approve, reject]);
      };
      approve.addEventListener("click", act("approve"));
      reject.addEventListener("click", act("reject"));
      for (const node of [note, approve, reject]) {
        node.addEventListener("click", (e) => e.stopPropagation());
        node.addEventListener("keydown", (e) => e.stopPropagation());
      }
      actions.append(note, approve, reject);
    }
    row.append(actions);
    row.addEventListener("click", () => openHeld(held.id, held));
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") openHeld(held.id, held);
    });
    return row;
  }

  function heldParams() {
    const params = new URLSearchParams();
    const status = byId("m-status").value;
    if (status) params.set("status", status);
    if (byId("m-reviewed").checked) params.set("include_reviewed", "true");
    params.set("page_size", String(PAGE));
    return params;
  }

  function updateHeldCount() {
    const rows = byId("held-rows");
    const pending = rows.querySelectorAll("button.approve").length;
    byId("held-empty").hidden = rows.children.length > 0;
    byId("queue-count").textContent = pending + " pending" + (byId("held-more").hidden ? "" : "+");
  }

  async function loadHeld(append) {
    if (!append) heldPaged = false;
    const mine = append ? heldGeneration : ++heldGeneration;
    const params = heldParams();
    if (append && heldToken) params.set("page_token", heldToken);
    const page = await api(API + "/quarantine?" + params.toString());
    if (mine !== heldGeneration) return;
    const rows = byId("held-rows");
    const fresh = (page.data || []).map(heldRow);
    if (append) rows.append(...fresh);
    else rows.replaceChildren(...fresh);
    heldToken = page.next_page_token || "";
    byId("held-more").hidden = !heldToken;
    updateHeldCount();
  }

  async function review(id, verdict, note, row, buttons) {
    const name = reviewer();
    if (!name) {
      showError("Enter your name as reviewer before approving or rejecting a claim.");
      byId("m-reviewer").focus();
      return;
    }
    for (const button of buttons) button.disabled = true;
    try {
      const held = await api(API + "/quarantine/" + encodeURIComponent(id) + "/review", {
        method: "POST",
        body: { verdict, reviewer: name, note: note || "" },
      });
      showError("");
      if (byId("m-reviewed").checked) row.replaceWith(heldRow(held));
      else row.remove();
      updateHeldCount();
      if (selected && selected.kind === "held" && selected.id === id) renderHeld(held);
      // A review moves the source's reputation and writes an audit event.
      loadReputation().catch(reportError);
      loadAudit(false).catch(reportError);
    } catch (error) {
      if (error.status === 409) {
        showError("That claim was already reviewed; the queue is refreshed.");
        loadHeld(false).catch(reportError);
      } else {
        showError("Review failed: " + error.message);
      }
      for (const button of buttons) button.disabled = false;
    }
  }

  // -- provenance --------------------------------------------------------------------

  function field(list, name, value) {
    list.append(el("dt", "", name));
    const dd = el("dd");
    if (value instanceof Node) dd.append(value);
    else dd.textContent = value === null || value === undefined || value === "" ? "–" : String(value);
    list.append(dd);
  }

  function bar(value, className) {
    const width = 120;
    const height = 10;
    const v = typeof value === "number" && isFinite(value) ? Math.max(0, Math.min(1, value)) : 0;
    const chart = svg("svg", {
      class: "bar " + (className || ""),
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": fmtScore(value),
    });
    chart.append(svg("rect", { class: "bar-bg", x: 0, y: 0, width, height, rx: 2 }));
    chart.append(svg("rect", { class: "bar-fg", x: 0, y: 0, width: v * width, height, rx: 2 }));
    return chart;
  }

  function renderDecision(decision) {
    const score = byId("prov-score");
    score.replaceChildren();
    const number = el("span", "score-value", fmtScore(decision.trust_score, 3));
    score.append(number, bar(decision.trust_score, "trust"));

    const signals = decision.signals || {};
    const weights = decision.weights || {};
    const rows = byId("prov-signal-rows");
    rows.replaceChildren();
    const names = [...SIGNALS];
    for (const name of [...Object.keys(signals), ...Object.keys(weights)]) {
      if (!names.includes(name)) names.push(name);
    }
    for (const name of names) {
      const row = el("tr", "signal-row");
      row.dataset.signal = name;
      cell(row, "name", name);
      cell(row, "num value", fmtScore(signals[name], 3));
      cell(row, "num weight", name in weights ? fmtScore(weights[name], 2) : "–");
      cell(row, "bar", bar(signals[name], name === "contradiction" || name === "danger" ? "bad" : ""));
      rows.append(row);
    }

    const reasons = byId("prov-reasons");
    reasons.replaceChildren(...(decision.reasons || []).map((reason) => el("li", "", reason)));
    if (!reasons.children.length) reasons.append(el("li", "muted", "none given"));

    const kinds = decision.redacted_kinds || [];
    byId("prov-redacted").textContent = kinds.length ? kinds.join(", ") : "none";

    const findings = byId("prov-finding-rows");
    findings.replaceChildren();
    for (const finding of decision.findings || []) {
      const row = el("tr", "prov-finding-row");
      const rule = el("td", "rule", finding.rule_id);
      rule.append(el("span", "sub", [finding.detector, finding.category].filter(Boolean).join(" · ")));
      const severity = el("td", "severity");
      severity.append(badge(finding.severity));
      severity.append(el("span", "sub", fmtScore(finding.confidence)));
      const message = el("td", "message", finding.message);
      message.append(el("span", "sub", finding.kind || ""));
      row.append(rule, severity, message);
      findings.append(row);
    }
    byId("prov-none").hidden = findings.children.length > 0;
    byId("prov-findings").hidden = findings.children.length === 0;
  }

  function decisionFields(list, decision) {
    field(list, "Decision", decision.decision_id);
    field(list, "Status", badge(decision.status));
    field(list, "Trust score", fmtScore(decision.trust_score, 3));
    field(list, "Stored", decision.stored ? "yes, in verified memory" : "no");
    if (decision.quarantine_id) field(list, "Held claim", decision.quarantine_id);
  }

  function showProvenance() {
    byId("provenance").hidden = false;
    markSelected();
  }

  function renderHeld(held) {
    const decision = held.decision || {};
    const list = byId("prov-fields");
    list.replaceChildren();
    field(list, "Source", held.source);
    field(list, "Held", fmtTime(held.create_time));
    field(list, "Held as", badge(held.status));
    field(list, "Review", held.review_verdict ? badge(held.review_verdict) : "pending");
    if (held.reviewer) field(list, "Reviewer", held.reviewer);
    decisionFields(list, decision);
    byId("prov-claim").textContent = held.claim || "";
    byId("prov-claim-box").hidden = false;
    renderDecision(decision);
    showProvenance();
  }

  async function openHeld(id, known) {
    selected = { kind: "held", id };
    if (known) renderHeld(known);
    try {
      const held = await api(API + "/quarantine/" + encodeURIComponent(id));
      if (selected && selected.kind === "held" && selected.id === id) renderHeld(held);
    } catch (error) {
      if (!known) showError("Could not open the held claim: " + error.message);
    }
  }

  async function openAudit(event) {
    selected = { kind: "audit", id: event.id };
    const decision = event.decision || {};
    const list = byId("prov-fields");
    list.replaceChildren();
    field(list, "Event", event.event_type);
    field(list, "Time", fmtTime(event.create_time));
    field(list, "Source", event.source);
    if (event.reviewer) field(list, "Reviewer", event.reviewer);
    decisionFields(list, decision);
    byId("prov-claim").textContent = "";
    byId("prov-claim-box").hidden = true;
    renderDecision(decision);
    showProvenance();
    // A held claim keeps its text: show it with the decision.
    if (decision.quarantine_id) {
      try {
        const held = await api(API + "/quarantine/" + encodeURIComponent(decision.quarantine_id));
        if (selected && selected.kind === "audit" && selected.id === event.id) {
          byId("prov-claim").textContent = held.claim || "";
          byId("prov-claim-box").hidden = false;
        }
      } catch (_) {
        // The claim may be gone; the decision is still worth showing.
      }
    }
  }

  function markSelected() {
    for (const row of byId("held-rows").children) {
      row.classList.toggle(
        "selected",
        Boolean(selected && selected.kind === "held" && row.dataset.id === selected.id)
      );
    }
    for (const row of byId("audit-rows").children) {
      row.classList.toggle(
        "selected",
        Boolean(selected && selected.kind === "audit" && row.dataset.id === selected.id)
      );
    }
  }

  function closeProvenance() {
    selected = null;
    byId("provenance").hidden = true;
    markSelected();
  }

  // -- audit log ---------------------------------------------------------------------

  function auditRow(event) {
    const row = el("tr", "audit-row");
    row.dataset.id = event.id;
    row.dataset.eventType = event.event_type || "";
    row.tabIndex = 0;
    const decision = event.decision || {};
    cell(row, "time", fmtTime(event.create_time));
    cell(row, "event", event.event_type);
    cell(row, "source", event.source);
    cell(row, "status", badge(decision.status));
    cell(row, "num trust", fmtScore(decision.trust_score));
    cell(row, "reviewer", event.reviewer || "");
    cell(row, "decision mono", decision.decision_id);
    row.addEventListener("click", () => openAudit(event));
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") openAudit(event);
    });
    return row;
  }

  async function loadAudit(append) {
    if (!append) auditPaged = false;
    const mine = append ? auditGeneration : ++auditGeneration;
    const params = new URLSearchParams();
    const source = byId("m-audit-source").value.trim();
    if (source) params.set("source", source);
    params.set("page_size", String(PAGE));
    if (append && auditToken) params.set("page_token", auditToken);
    const page = await api(API + "/audit?" + params.toString());
    if (mine !== auditGeneration) return;
    const rows = byId("audit-rows");
    const fresh = (page.data || []).map(auditRow);
    if (append) rows.append(...fresh);
    else rows.replaceChildren(...fresh);
    auditToken = page.next_page_token || "";
    byId("audit-more").hidden = !auditToken;
    byId("audit-empty").hidden = rows.children.length > 0;
    markSelected();
  }

  // -- reputation --------------------------------------------------------------------

  // Points of a source's score over time, oldest first: the score before the first
  // change, then the score after each change. No history: the current score, flat.
  function series(reputation, changes) {
    const ordered = [...changes].sort((a, b) => {
      const ta = Date.parse(a.create_time) || 0;
      const tb = Date.parse(b.create_time) || 0;
      return ta - tb;
    });
    const points = [];
    if (ordered.length) {
      const first = ordered[0];
      points.push({ time: Date.parse(first.create_time) || 0, score: Number(first.old_score) });
      for (const change of ordered) {
        points.push({
          time: Date.parse(change.create_time) || 0,
          score: Number(change.new_score),
          change,
        });
      }
    } else {
      const now = Date.now();
      const score = Number(reputation.score);
      points.push({ time: now - 1, score }, { time: now, score });
    }
    return points;
  }

  function lineChart(reputation, changes, width, height, detailed) {
    const points = series(reputation, changes || []);
    const pad = detailed ? 24 : 3;
    const left = detailed ? 30 : pad;
    const innerW = width - left - pad;
    const innerH = height - 2 * pad;
    const t0 = points[0].time;
    const span = points[points.length - 1].time - t0;
    const byIndex = !(span > 0);
    const x = (p, i) =>
      left + (byIndex ? (points.length > 1 ? (i / (points.length - 1)) * innerW : 0) : ((p.time - t0) / span) * innerW);
    // The large chart shows the whole 0–1 scale; the inline one zooms to the scores it
    // draws (at least 0.2 tall), so a small step is still visible.
    let lo = 0;
    let hi = 1;
    if (!detailed) {
      const values = points.map((p) => p.score).filter(isFinite);
      if (typeof reputation.prior === "number") values.push(reputation.prior);
      const mid = (Math.min(...values) + Math.max(...values)) / 2;
      const half = Math.max(0.1, (Math.max(...values) - Math.min(...values)) / 2 + 0.02);
      lo = Math.max(0, Math.min(1 - 2 * half, mid - half));
      hi = Math.min(1, lo + 2 * half);
    }
    const y = (score) => {
      const v = Math.max(lo, Math.min(hi, isFinite(score) ? score : lo));
      return pad + (1 - (v - lo) / (hi - lo || 1)) * innerH;
    };

    const chart = svg("svg", {
      class: "spark" + (detailed ? " large" : ""),
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": `reputation of ${reputation.source} over time, now ${fmtScore(reputation.score)}`,
    });
    const title = svg("title");
    title.textContent = `${reputation.source}: ${points.map((p) => fmtScore(p.score)).join(" → ")}`;
    chart.append(title);
    chart.append(svg("rect", { class: "spark-bg", x: left, y: pad, width: innerW, height: innerH }));
    if (detailed) {
      for (const tick of [0, 0.5, 1]) {
        chart.append(svg("line", { class: "grid", x1: left, x2: left + innerW, y1: y(tick), y2: y(tick) }));
        const label = svg("text", { class: "tick", x: left - 4, y: y(tick) + 3, "text-anchor": "end" });
        label.textContent = tick.toFixed(1);
        chart.append(label);
      }
      const from = svg("text", { class: "tick", x: left, y: height - 6 });
      from.textContent = new Date(points[0].time).toLocaleString();
      const to = svg("text", { class: "tick", x: left + innerW, y: height - 6, "text-anchor": "end" });
      to.textContent = new Date(points[points.length - 1].time).toLocaleString();
      chart.append(from, to);
    }
    if (typeof reputation.prior === "number") {
      chart.append(
        svg("line", { class: "prior", x1: left, x2: left + innerW, y1: y(reputation.prior), y2: y(reputation.prior) })
      );
    }
    const d = points
      .map((p, i) => (i ? "L" : "M") + x(p, i).toFixed(1) + " " + y(p.score).toFixed(1))
      .join(" ");
    chart.append(svg("path", { class: "line", d, fill: "none" }));
    points.forEach((p, i) => {
      if (!p.change && !(detailed || i === points.length - 1)) return;
      const outcome = p.change ? p.change.outcome : "";
      const dot = svg("circle", {
        class: "dot " + (["good", "bad", "neutral"].includes(outcome) ? outcome : ""),
        cx: x(p, i).toFixed(1),
        cy: y(p.score).toFixed(1),
        r: detailed ? 3.5 : 2,
      });
      if (p.change) {
        const tip = svg("title");
        tip.textContent = `${fmtTime(p.change.create_time)} · ${outcome} · ${fmtScore(
          p.change.old_score
        )} → ${fmtScore(p.change.new_score)}${p.change.reason ? " · " + p.change.reason : ""}`;
        dot.append(tip);
      }
      if (p.change || i === points.length - 1) chart.append(dot);
    });
    return chart;
  }

  async function history(source) {
    const page = await api(API + "/reputation/" + encodeURIComponent(source) + "/history?page_size=500");
    return page.data || [];
  }

  function resetButton(label, source) {
    const button = el("button", "link danger reset", label);
    button.type = "button";
    let armed = false;
    button.addEventListener("click", async (e) => {
      e.stopPropagation();
      if (!armed) {
        // Two clicks, no dialog: the first arms the button.
        armed = true;
        button.textContent = "confirm " + label + "?";
        button.classList.add("armed");
        setTimeout(() => {
          armed = false;
          button.textContent = label;
          button.classList.remove("armed");
        }, 4000);
        return;
      }
      button.disabled = true;
      try {
        await api(API + "/reputation/reset", { method: "POST", body: source ? { source } : {} });
        showError("");
        await loadReputation();
      } catch (error) {
        showError("Reset failed: " + error.message);
        button.disabled = false;
      }
    });
    return button;
  }

  function reputationRow(reputation, changes) {
    const row = el("tr", "rep-row");
    row.dataset.source = reputation.source;
    row.tabIndex = 0;
    if (reputation.source === openSource) row.classList.add("selected");
    cell(row, "source", reputation.source);
    const score = cell(row, "num score", fmtScore(reputation.score));
    const delta = reputation.score - reputation.prior;
    if (isFinite(delta) && Math.abs(delta) >= 0.005) {
      score.classList.add(delta > 0 ? "up" : "down");
    }
    cell(row, "num prior", fmtScore(reputation.prior));
    cell(row, "num good", reputation.good_count ?? 0);
    cell(row, "num bad", reputation.bad_count ?? 0);
    const chart = cell(row, "chart", changes ? lineChart(reputation, changes, 160, 36, false) : "–");
    if (changes) chart.title = changes.length + " change" + (changes.length === 1 ? "" : "s");
    cell(row, "time", fmtTime(reputation.update_time));
    cell(row, "", resetButton("reset", reputation.source));
    const open = () => openReputation(reputation, changes);
    row.addEventListener("click", open);
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") open();
    });
    return row;
  }

  function openReputation(reputation, changes) {
    openSource = reputation.source;
    for (const row of byId("rep-rows").children) {
      row.classList.toggle("selected", row.dataset.source === openSource);
    }
    byId("rep-detail-title").textContent = "History of " + reputation.source;
    byId("rep-chart-large").replaceChildren(lineChart(reputation, changes || [], 640, 180, true));
    const rows = byId("rep-change-rows");
    rows.replaceChildren();
    for (const change of changes || []) {
      const row = el("tr", "change-row");
      cell(row, "time", fmtTime(change.create_time));
      cell(row, "outcome", badge(change.outcome));
      cell(row, "num", fmtScore(change.old_score) + " → " + fmtScore(change.new_score));
      cell(row, "reason", change.reason);
      rows.append(row);
    }
    if (!rows.children.length) {
      const row = el("tr");
      const td = cell(row, "muted", "No changes: the score is the source's prior.");
      td.colSpan = 4;
      rows.append(row);
    }
    byId("rep-detail").hidden = false;
  }

  async function loadReputation() {
    const mine = ++repGeneration;
    const page = await api(API + "/reputation?page_size=200");
    const sources = page.data || [];
    const histories = await Promise.all(
      sources.map((r) => history(r.source).catch(() => null))
    );
    if (mine !== repGeneration) return;
    const rows = sources.map((r, i) => reputationRow(r, histories[i]));
    byId("rep-rows").replaceChildren(...rows);
    byId("rep-empty").hidden = rows.length > 0;
    if (openSource) {
      const i = sources.findIndex((r) => r.source === openSource);
      if (i >= 0) openReputation(sources[i], histories[i]);
      else {
        openSource = null;
        byId("rep-detail").hidden = true;
      }
    }
  }

  // -- wiring ------------------------------------------------------------------------

  function reportError(error) {
    showError("Memory: " + error.message);
  }

  async function refreshAll() {
    const results = await Promise.allSettled([loadHeld(false), loadReputation(), loadAudit(false)]);
    const failed = results.find((r) => r.status === "rejected");
    if (failed) reportError(failed.reason);
    else showError("");
  }

  async function improve() {
    const button = byId("m-improve");
    const result = byId("m-improve-result");
    button.disabled = true;
    result.textContent = "running…";
    try {
      const reply = await api(API + "/improve", { method: "POST", body: {} });
      result.textContent = reply.summary || "done";
    } catch (error) {
      result.textContent = "failed: " + error.message;
    } finally {
      button.disabled = false;
    }
  }

  // Live: refresh while the tab is shown, unless the reader is in the middle of something
  // (typing a note or reviewer name, a reset armed, paged back) that a redraw would lose.
  function busy() {
    const active = document.activeElement;
    if (active && active.closest && active.closest("#view-memory") && active.matches("input, select")) {
      return true;
    }
    for (const note of byId("held-rows").querySelectorAll("input.note")) {
      if (note.value) return true;
    }
    return document.querySelector("#view-memory button.reset.armed") !== null;
  }

  function poll() {
    if (document.hidden || byId("view-memory").hidden || !byId("live").checked || busy()) return;
    const work = [loadReputation()];
    if (!heldPaged) work.push(loadHeld(false));
    if (!auditPaged) work.push(loadAudit(false));
    Promise.all(work).catch(reportError);
  }

  function start() {
    if (started) return;
    started = true;
    setInterval(poll, POLL_MS);
    const name = window.localStorage ? localStorage.getItem(REVIEWER_KEY) : null;
    if (name) byId("m-reviewer").value = name;
    byId("m-reviewer").addEventListener("change", () => {
      if (window.localStorage) localStorage.setItem(REVIEWER_KEY, reviewer());
    });
    const queueFilters = byId("queue-filters");
    queueFilters.addEventListener("submit", (e) => e.preventDefault());
    for (const id of ["m-status", "m-reviewed"]) {
      byId(id).addEventListener("change", () => loadHeld(false).catch(reportError));
    }
    byId("m-refresh").addEventListener("click", refreshAll);
    byId("held-more").addEventListener("click", () => {
      heldPaged = true;
      loadHeld(true).catch(reportError);
    });
    const auditFilters = byId("audit-filters");
    const auditChanged = (e) => {
      if (e) e.preventDefault();
      loadAudit(false).catch(reportError);
    };
    auditFilters.addEventListener("submit", auditChanged);
    auditFilters.addEventListener("change", auditChanged);
    byId("audit-more").addEventListener("click", () => {
      auditPaged = true;
      loadAudit(true).catch(reportError);
    });
    byId("prov-close").addEventListener("click", closeProvenance);
    byId("rep-detail-close").addEventListener("click", () => {
      openSource = null;
      byId("rep-detail").hidden = true;
      for (const row of byId("rep-rows").children) row.classList.remove("selected");
    });
    const resetAll = resetButton("reset all", null);
    resetAll.id = "rep-reset-all";
    byId("rep-reset-all").replaceWith(resetAll);
    byId("m-improve").addEventListener("click", improve);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !byId("view-memory").hidden) closeProvenance();
    });
  }

  function activate() {
    start();
    refreshAll();
  }

  document.addEventListener("mithril:view", (e) => {
    if (e.detail && e.detail.view === "memory") activate();
  });
  // dashboard.js may have shown the Memory tab before this script listened.
  if (byId("view-memory") && !byId("view-memory").hidden) activate();
})();
