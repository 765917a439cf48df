// docpipe review page: plain JS, no build step. Talks to /v1/review/queue and /v1/jobs/{id}/documents/{i}.
"use strict";
const state = { queue: [], qi: -1, doc: null, page: 0, active: null };
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

function token() { return sessionStorage.getItem("docpipe-token"); }

async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (token()) headers["Authorization"] = "Bearer " + token();
  const resp = await fetch(path, Object.assign({}, opts, { headers }));
  if (resp.status === 401) {
    const t = window.prompt("API token (Authorization: Bearer)");
    if (t) { sessionStorage.setItem("docpipe-token", t); return api(path, opts); }
  }
  if (!resp.ok) {
    let msg = resp.status + "";
    try { const e = await resp.json(); msg += " " + e.errors.map((x) => x.type + ": " + x.message).join("; "); } catch (_) {}
    throw new Error(msg);
  }
  return resp;
}

function status(text) { $("status").textContent = text; }

async function loadQueue(keepKey) {
  const data = await (await api("/v1/review/queue")).json();
  state.queue = data.documents;
  const list = $("queue-list");
  list.replaceChildren();
  state.queue.forEach((d, i) => {
    const li = document.createElement("li");
    li.dataset.index = i;
    li.textContent = d.job_id.slice(0, 8) + " #" + d.index;
    const r = document.createElement("span");
    r.className = "reasons";
    r.textContent = d.review_reasons.join(", ");
    li.appendChild(r);
    li.addEventListener("click", () => openDoc(i));
    list.appendChild(li);
  });
  status(state.queue.length + " to review");
  if (!state.queue.length) { clearDoc(); return; }
  let i = keepKey ? state.queue.findIndex((d) => d.job_id + "/" + d.index === keepKey) : -1;
  await openDoc(i >= 0 ? i : Math.min(Math.max(state.qi, 0), state.queue.length - 1));
}

function clearDoc() {
  state.doc = null;
  $("fields").replaceChildren();
  $("overlay").replaceChildren();
  $("page-img").removeAttribute("src");
  $("doc-head").textContent = "Nothing to review.";
  $("approve").disabled = true;
}

async function openDoc(i) {
  state.qi = i;
  const q = state.queue[i];
  document.querySelectorAll("#queue li").forEach((li) => li.classList.toggle("current", Number(li.dataset.index) === i));
  state.doc = await (await api(`/v1/jobs/${q.job_id}/documents/${q.index}`)).json();
  state.active = null;
  renderFields();
  const first = Object.values(state.doc.result.fields).find((f) => f && f.page != null);
  await showPage(first ? first.page : 0);
  $("approve").disabled = false;
  const firstInput = $("fields").querySelector("input");
  if (firstInput) firstInput.focus();
}

function fieldIssues(key, f) {
  const out = [];
  for (const r of state.doc.result.review_reasons) { const [kind, k] = r.split(":"); if (k === key) out.push(kind); }
  if (f && f.issues) out.push(...f.issues);
  return out;
}

function renderFields() {
  const form = $("fields");
  form.replaceChildren();
  const res = state.doc.result;
  $("doc-head").textContent = `job ${state.doc.job_id.slice(0, 8)} · document ${state.doc.index} · ` +
    `sha256 ${state.doc.sha256.slice(0, 12)} · ${res.review_reasons.length} reason(s)`;
  Object.entries(res.fields).forEach(([key, f]) => {
    const box = document.createElement("div");
    box.className = "field";
    box.dataset.key = key;
    const issues = fieldIssues(key, f);
    if (issues.length) box.classList.add("flagged");
    const label = document.createElement("label");
    label.textContent = key;
    label.htmlFor = "f-" + key;
    const input = document.createElement("input");
    input.id = "f-" + key;
    input.name = key;
    input.value = f && f.value != null ? f.value : "";
    input.dataset.key = key;
    input.addEventListener("focus", () => activate(key, false));
    const meta = document.createElement("div");
    meta.className = "meta";
    const raw = f && f.text != null ? f.text : "—";
    const conf = f && f.confidence != null ? f.confidence.toFixed(3) : "—";
    meta.textContent = `OCR: ${raw} · confidence ${conf}`;
    if (issues.length) {
      const span = document.createElement("span");
      span.className = "issues";
      span.textContent = " · " + issues.join(", ");
      meta.appendChild(span);
    }
    box.append(label, input, meta);
    form.appendChild(box);
  });
}

async function showPage(p) {
  state.page = p;
  const d = state.doc;
  const pages = d.result.pages;
  const nav = $("pages");
  nav.replaceChildren();
  if (pages.length > 1) pages.forEach((_, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "page " + (i + 1);
    b.disabled = i === p;
    b.addEventListener("click", () => showPage(i));
    nav.appendChild(b);
  });
  const img = $("page-img");
  const pg = pages[p];
  if (!pg) { img.removeAttribute("src"); $("overlay").replaceChildren(); return; }
  const url = `/v1/jobs/${d.job_id}/documents/${d.index}/pages/${p}`;
  const blob = await (await api(url)).blob();
  img.src = URL.createObjectURL(blob);
  await img.decode();
  drawOverlay(pg);
}

function drawOverlay(pg) {
  const svg = $("overlay");
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${pg.width} ${pg.height}`);
  svg.setAttribute("width", $("page-img").width);
  svg.setAttribute("height", $("page-img").height);
  const pts = (poly) => poly.map((xy) => xy.join(",")).join(" ");
  for (const line of pg.lines) {
    const el = document.createElementNS(SVGNS, "polygon");
    el.setAttribute("points", pts(line.polygon));
    el.setAttribute("class", "line");
    svg.appendChild(el);
  }
  for (const [key, f] of Object.entries(state.doc.result.fields)) {
    if (!f || !f.polygon || f.page !== state.page) continue;
    const el = document.createElementNS(SVGNS, "polygon");
    el.setAttribute("points", pts(f.polygon));
    el.setAttribute("class", "field" + (key === state.active ? " active" : ""));
    el.dataset.key = key;
    const title = document.createElementNS(SVGNS, "title");
    title.textContent = key;
    el.appendChild(title);
    el.addEventListener("click", () => activate(key, true));
    svg.appendChild(el);
  }
}

function activate(key, focusInput) {
  state.active = key;
  document.querySelectorAll("#fields .field").forEach((b) => b.classList.toggle("active", b.dataset.key === key));
  document.querySelectorAll("#overlay polygon.field").forEach((p) =>
    p.classList.toggle("active", p.dataset.key === key));
  const f = state.doc.result.fields[key];
  if (f && f.page != null && f.page !== state.page) showPage(f.page);
  const input = $("f-" + key);
  if (focusInput && input) input.focus();
  const poly = document.querySelector(`#overlay polygon.field[data-key="${key}"]`);
  if (poly && !focusInput) poly.scrollIntoView({ block: "nearest", inline: "nearest" });
}

async function approve() {
  if (!state.doc) return;
  const fields = {};
  $("fields").querySelectorAll("input").forEach((i) => { fields[i.dataset.key] = i.value.trim() === "" ? null : i.value.trim(); });
  const d = state.doc;
  const resp = await api(`/v1/jobs/${d.job_id}/documents/${d.index}/corrections`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fields }),
  });
  const saved = await resp.json();
  document.body.dataset.lastCorrection = String(saved.id);
  await loadQueue();  // sets the queue count as the status; the confirmation comes last so it stays visible
  status(`approved: correction ${saved.id} saved`);
}

function moveField(delta) {
  const inputs = Array.from($("fields").querySelectorAll("input"));
  const i = inputs.indexOf(document.activeElement);
  const next = inputs[Math.min(Math.max(i + delta, 0), inputs.length - 1)];
  if (next) next.focus();
}

document.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); approve().catch((err) => status(err.message)); }
  else if (e.key === "Enter" && e.target.tagName === "INPUT") { e.preventDefault(); moveField(1); }
  else if (e.altKey && e.key === "ArrowRight" && state.qi < state.queue.length - 1) { e.preventDefault(); openDoc(state.qi + 1); }
  else if (e.altKey && e.key === "ArrowLeft" && state.qi > 0) { e.preventDefault(); openDoc(state.qi - 1); }
  else if (e.key === "ArrowDown" && !e.altKey) { e.preventDefault(); moveField(1); }
  else if (e.key === "ArrowUp" && !e.altKey) { e.preventDefault(); moveField(-1); }
});
$("approve").addEventListener("click", () => approve().catch((err) => status(err.message)));
window.addEventListener("resize", () => { if (state.doc && state.doc.result.pages[state.page]) drawOverlay(state.doc.result.pages[state.page]); });
loadQueue().catch((err) => status(err.message));
