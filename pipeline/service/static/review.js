// docpipe review page: plain JS, no build step. Talks to /v1/review/queue and /v1/jobs/{id}/documents/{i}.
"use strict";
// picks: field key -> OCR lines clicked to fill it, in click order ({page, line, start, end}: line = index in
// result.pages[page].lines); zoom: null = fit the page to the pane's width, else a factor of that width.
const state = { queue: [], qi: -1, doc: null, page: 0, active: null, picks: {}, zoom: null };
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const ZOOM_STEP = 1.25, ZOOM_MIN = 0.25, ZOOM_MAX = 6;

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
  state.picks = {};
  renderFields();
  const first = Object.values(state.doc.result.fields).find((f) => f && f.page != null);
  await showPage(first ? first.page : 0);
  $("approve").disabled = false;
  const flagged = $("fields").querySelector(".field.flagged input") || $("fields").querySelector("input");
  if (flagged) flagged.focus();
}

// The review reasons that name this field (kind of "kind:field"), and the validator's issues.
function fieldReasons(key) {
  const out = [];
  for (const r of state.doc.result.review_reasons) { const [kind, k] = r.split(":"); if (k === key) out.push(kind); }
  return out;
}

function renderFields() {
  const form = $("fields");
  form.replaceChildren();
  const res = state.doc.result;
  const docReasons = res.review_reasons.filter((r) => !r.includes(":") || !(r.split(":")[1] in res.fields));
  $("doc-head").textContent = `job ${state.doc.job_id.slice(0, 8)} · document ${state.doc.index} · ` +
    `sha256 ${state.doc.sha256.slice(0, 12)} · ${res.review_reasons.length} reason(s)` +
    (docReasons.length ? " · " + docReasons.join(", ") : "");
  Object.entries(res.fields).forEach(([key, f]) => {
    const box = document.createElement("div");
    box.className = "field";
    box.dataset.key = key;
    const reasons = fieldReasons(key);
    if (reasons.length || (f && f.issues && f.issues.length)) box.classList.add("flagged");
    const head = document.createElement("div");
    head.className = "head";
    const label = document.createElement("label");
    label.textContent = key;
    label.htmlFor = "f-" + key;
    head.appendChild(label);
    for (const kind of reasons) {
      const badge = document.createElement("span");
      badge.className = "reason " + kind;
      badge.textContent = kind;
      head.appendChild(badge);
    }
    const input = document.createElement("input");
    input.id = "f-" + key;
    input.name = key;
    input.value = f && f.value != null ? f.value : "";
    input.dataset.key = key;
    input.addEventListener("focus", () => activate(key, false));
    input.addEventListener("input", () => { if (input.value === "") delete state.picks[key]; showSource(key); markPicked(); });
    const meta = document.createElement("div");
    meta.className = "meta";
    const raw = f && f.text != null ? f.text : "—";
    const conf = f && f.confidence != null ? f.confidence.toFixed(3) : "—";
    meta.textContent = `OCR: ${raw} · confidence ${conf}`;
    if (f && f.issues && f.issues.length) {
      const span = document.createElement("span");
      span.className = "issues";
      span.textContent = " · " + f.issues.join(", ");
      meta.appendChild(span);
    }
    const source = document.createElement("div");
    source.className = "source";
    source.id = "src-" + key;
    box.append(head, input, meta, source);
    form.appendChild(box);
  });
}

function lineText(p) { return state.doc.result.pages[p.page].lines[p.line].text.slice(p.start, p.end); }

// The part of the clicked lines the value was taken from (as the server narrows it), or null when typed.
function narrowed(picks, value) {
  const texts = picks.map(lineText), at = value ? texts.join("").indexOf(value) : -1;
  if (at < 0) return null;
  const out = [];
  let off = 0;
  picks.forEach((p, i) => {
    const a = Math.max(at - off, 0), b = Math.min(at + value.length - off, texts[i].length);
    if (a < b) out.push(Object.assign({}, p, { start: p.start + a, end: p.start + b }));
    off += texts[i].length;
  });
  return out;
}

// Under the field: which lines (and characters) its value comes from, or that the clicked lines are dropped.
function showSource(key) {
  const el = $("src-" + key);
  if (!el) return;
  const picks = state.picks[key] || [];
  const spans = narrowed(picks, $("f-" + key).value.trim());
  el.classList.toggle("dropped", !!picks.length && !spans);
  if (!picks.length) { el.textContent = ""; return; }
  if (!spans) { el.textContent = "typed: the clicked lines are not kept as its source"; return; }
  const lines = state.doc.result.pages[spans[0].page].lines;
  el.textContent = `from page ${spans[0].page + 1}, line${spans.length > 1 ? "s" : ""} ` + spans.map((s) =>
    s.start === 0 && s.end === lines[s.line].text.length ? `${s.line}` : `${s.line} [${s.start}–${s.end})`).join(" + ");
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
  applyZoom();
}

function drawOverlay(pg) {
  const svg = $("overlay");
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${pg.width} ${pg.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const pts = (poly) => poly.map((xy) => xy.join(",")).join(" ");
  pg.lines.forEach((line, i) => {
    if (!line.text || !line.polygon) return;
    const el = document.createElementNS(SVGNS, "polygon");
    el.setAttribute("points", pts(line.polygon));
    el.setAttribute("class", "line");
    el.dataset.line = i;
    const title = document.createElementNS(SVGNS, "title");
    title.textContent = line.text;
    el.appendChild(title);
    svg.appendChild(el);
  });
  for (const [key, f] of Object.entries(state.doc.result.fields)) {
    if (!f || !f.polygon || f.page !== state.page) continue;
    const el = document.createElementNS(SVGNS, "polygon");
    el.setAttribute("points", pts(f.polygon));
    el.setAttribute("class", "field" + (key === state.active ? " active" : ""));
    el.dataset.key = key;
    svg.appendChild(el);
  }
  markPicked();
}

// Fit: the page is as wide as the pane; zoom: a factor of that width. The overlay takes the image's size
// and its viewBox maps the result's pixel space onto it, so the polygons scale with the image.
function applyZoom() {
  const img = $("page-img"), svg = $("overlay"), scroller = $("scroller");
  if (!img.naturalWidth) return;
  const pad = parseFloat(getComputedStyle(scroller).paddingLeft) * 2;
  const fit = Math.max(50, scroller.clientWidth - pad);
  const w = Math.round(fit * (state.zoom || 1));
  const h = Math.round(w * img.naturalHeight / img.naturalWidth);
  img.style.width = w + "px";
  img.style.height = h + "px";
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  $("zoom-level").textContent = Math.round(100 * w / img.naturalWidth) + "%";
  $("zoom-fit").disabled = state.zoom === null;
}

function zoom(how) {
  if (how === "fit") state.zoom = null;
  else state.zoom = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, (state.zoom || 1) * (how === "in" ? ZOOM_STEP : 1 / ZOOM_STEP)));
  applyZoom();
}

// Highlights the lines the active field's value is taken from (what approving will keep).
function markPicked() {
  const key = state.active, input = key && $("f-" + key);
  const spans = (input && narrowed(state.picks[key] || [], input.value.trim())) || [];
  const picked = new Set(spans.filter((p) => p.page === state.page).map((p) => p.line));
  document.querySelectorAll("#overlay polygon.line").forEach((el) => {
    el.classList.toggle("picked", picked.has(Number(el.dataset.line)));
    if (picked.has(Number(el.dataset.line))) $("overlay").appendChild(el);  // drawn above the field polygons
  });
}

function activate(key, focusInput) {
  state.active = key;
  document.querySelectorAll("#fields .field").forEach((b) => b.classList.toggle("active", b.dataset.key === key));
  document.querySelectorAll("#overlay polygon.field").forEach((p) =>
    p.classList.toggle("active", p.dataset.key === key));
  markPicked();
  const f = state.doc.result.fields[key];
  if (f && f.page != null && f.page !== state.page) showPage(f.page);
  const input = $("f-" + key);
  if (focusInput && input) input.focus();
  const poly = document.querySelector(`#overlay polygon.field[data-key="${key}"]`);
  if (poly) poly.scrollIntoView({ block: "nearest", inline: "nearest" });
}

// Where the value starts in a "label：value" line (after the first colon), 0 when there is none.
function afterLabel(text) {
  const m = /^[^：:]{1,12}[：:]\s*/.exec(text);
  return m && m[0].length < text.length ? m[0].length : 0;
}

// Click-to-fill: the active field gets the clicked line's text; Shift+click adds the line (click order);
// Alt+click takes only what follows the line's label ("投保人：张三" -> "张三").
function pickLine(lineIndex, add, valueOnly) {
  const key = state.active;
  if (!key) { status("select a field first"); return; }
  const text = state.doc.result.pages[state.page].lines[lineIndex].text;
  let picks = add ? (state.picks[key] || []).filter((p) => p.page === state.page) : [];
  if (add && picks.some((p) => p.line === lineIndex)) picks = picks.filter((p) => p.line !== lineIndex);
  else picks.push({ page: state.page, line: lineIndex, start: valueOnly ? afterLabel(text) : 0, end: text.length });
  state.picks[key] = picks;
  const input = $("f-" + key);
  input.value = picks.map(lineText).join("");
  input.focus();
  showSource(key);
  markPicked();
}

// Ctrl+click: make the field whose polygon holds the point the active one.
function fieldAt(evt) {
  const svg = $("overlay");
  const pt = new DOMPoint(evt.clientX, evt.clientY).matrixTransform(svg.getScreenCTM().inverse());
  for (const [key, f] of Object.entries(state.doc.result.fields)) {
    if (!f || !f.polygon || f.page !== state.page) continue;
    const xs = f.polygon.map((p) => p[0]), ys = f.polygon.map((p) => p[1]);
    if (pt.x >= Math.min(...xs) && pt.x <= Math.max(...xs) && pt.y >= Math.min(...ys) && pt.y <= Math.max(...ys)) return key;
  }
  return null;
}

$("overlay").addEventListener("click", (e) => {
  if (!state.doc) return;
  if (e.ctrlKey || e.metaKey) { const key = fieldAt(e); if (key) activate(key, true); return; }
  const el = e.target.closest("polygon.line");
  if (el) pickLine(Number(el.dataset.line), e.shiftKey, e.altKey);
});

async function approve() {
  if (!state.doc) return;
  const fields = {}, sources = {};
  $("fields").querySelectorAll("input").forEach((i) => {
    const v = i.value.trim() === "" ? null : i.value.trim();
    fields[i.dataset.key] = v;
    const picks = state.picks[i.dataset.key];
    if (v !== null && picks && picks.length) sources[i.dataset.key] = picks;
  });
  const d = state.doc;
  const resp = await api(`/v1/jobs/${d.job_id}/documents/${d.index}/corrections`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fields, sources }),
  });
  const saved = await resp.json();
  document.body.dataset.lastCorrection = String(saved.id);
  await loadQueue();  // sets the queue count as the status; the confirmation comes last so it stays visible
  const n = Object.keys(saved.sources || {}).length;
  status(`approved: correction ${saved.id} saved` + (n ? `, ${n} field(s) with source lines` : ""));
}

function moveField(delta) {
  const inputs = Array.from($("fields").querySelectorAll("input"));
  const i = inputs.indexOf(document.activeElement);
  const next = inputs[Math.min(Math.max(i + delta, 0), inputs.length - 1)];
  if (next) next.focus();
}

// Alt+↓ / Alt+↑: the next / previous field with a review reason or a validator issue.
function moveFlagged(delta) {
  const inputs = Array.from($("fields").querySelectorAll("input"));
  const flagged = new Set(Array.from($("fields").querySelectorAll(".field.flagged input")));
  for (let i = inputs.indexOf(document.activeElement) + delta; i >= 0 && i < inputs.length; i += delta) {
    if (flagged.has(inputs[i])) { inputs[i].focus(); return; }
  }
}

document.addEventListener("keydown", (e) => {
  const inInput = e.target.tagName === "INPUT";
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); approve().catch((err) => status(err.message)); }
  else if (e.key === "Enter" && inInput) { e.preventDefault(); moveField(1); }
  else if (e.key === "Escape" && state.active && state.picks[state.active]) {
    e.preventDefault(); delete state.picks[state.active]; showSource(state.active); markPicked();
  }
  else if ((e.altKey || !inInput) && (e.key === "+" || e.key === "=")) { e.preventDefault(); zoom("in"); }
  else if ((e.altKey || !inInput) && (e.key === "-" || e.key === "−")) { e.preventDefault(); zoom("out"); }
  else if ((e.altKey || !inInput) && e.key === "0") { e.preventDefault(); zoom("fit"); }
  else if (e.altKey && e.key === "ArrowRight" && state.qi < state.queue.length - 1) { e.preventDefault(); openDoc(state.qi + 1); }
  else if (e.altKey && e.key === "ArrowLeft" && state.qi > 0) { e.preventDefault(); openDoc(state.qi - 1); }
  else if (e.altKey && e.key === "ArrowDown") { e.preventDefault(); moveFlagged(1); }
  else if (e.altKey && e.key === "ArrowUp") { e.preventDefault(); moveFlagged(-1); }
  else if (e.key === "ArrowDown" && !e.altKey) { e.preventDefault(); moveField(1); }
  else if (e.key === "ArrowUp" && !e.altKey) { e.preventDefault(); moveField(-1); }
});
$("approve").addEventListener("click", () => approve().catch((err) => status(err.message)));
$("zoom-in").addEventListener("click", () => zoom("in"));
$("zoom-out").addEventListener("click", () => zoom("out"));
$("zoom-fit").addEventListener("click", () => zoom("fit"));
new ResizeObserver(() => applyZoom()).observe($("scroller"));
loadQueue().catch((err) => status(err.message));
