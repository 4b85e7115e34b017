/* The attempt viewer, shared by the run, compare and matrix pages: an attempt's facts,
   checks, transcript and final answer as DOM nodes; and (attemptViewer, at the end) how the
   run and compare pages open and close it. Text only ever goes in as text
   (textContent via el()), never parsed as HTML; long texts are cut with a "show all". */
const TRUNCATE = 2000;
function pre(text, cls) {
  const value = text === null || text === undefined ? "" : String(text);
  const box = el("div", {cls: "pre-box"});
  const p = el("pre", {cls: cls || ""});
  if (value.length > TRUNCATE) {
    p.textContent = value.slice(0, TRUNCATE) + "…";
    const more = el("button", {type: "button", cls: "show-all", text: "show all (" + value.length + " characters)"});
    more.addEventListener("click", function () { p.textContent = value; more.remove(); });
    box.appendChild(p); box.appendChild(more);
  } else {
    p.textContent = value;
    box.appendChild(p);
  }
  return box;
}

function asText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function turnNode(turn, index) {
  const classes = ["turn", turn.role];
  if (turn.skill_load) classes.push("skill-load");
  if (turn.is_error) classes.push("tool-error");
  const node = el("div", {cls: classes.join(" "), "data-turn": String(index)});
  if (turn.role === "tool") {
    const summary = el("summary", {}, [turn.tool_name || "tool call"]);
    if (turn.skill_load) summary.appendChild(el("span", {cls: "badge", text: "skill load"}));
    if (turn.is_error) summary.appendChild(el("span", {cls: "badge err", text: "error"}));
    const box = el("details", {cls: "tool"}, [summary,
      el("div", {cls: "role", text: "input"}), pre(asText(turn.tool_input), "tool-input"),
      el("div", {cls: "role", text: "output"}), pre(asText(turn.tool_output), "tool-output")]);
    if (turn.content) box.appendChild(pre(turn.content));
    node.appendChild(box);
  } else {
    node.appendChild(el("div", {cls: "role", text: turn.role}));
    node.appendChild(pre(turn.content, "turn-text"));
  }
  return node;
}

function verdict(passed) {
  if (passed === true) return el("span", {cls: "verdict pass", text: "✓ passed"});
  if (passed === false) return el("span", {cls: "verdict fail", text: "✗ failed"});
  return el("span", {cls: "verdict none", text: "⊘ no verdict"});
}

/* The final answer rendered as Markdown (markdown.js: text nodes only), with a button
   that swaps to the literal source and back. */
function answerNodes(text) {
  const rendered = el("div", {cls: "final-answer md-answer"}, markdownNodes(text));
  const source = pre(text, "final-answer-source");
  source.hidden = true;
  const toggle = el("button", {type: "button", cls: "md-toggle", text: "show source"});
  toggle.addEventListener("click", function () {
    const showSource = source.hidden;
    source.hidden = !showSource;
    rendered.hidden = showSource;
    toggle.textContent = showSource ? "show rendered Markdown" : "show source";
  });
  return [toggle, rendered, source];
}

function section(title, children) {
  return el("section", {cls: "v-section"}, [el("h3", {text: title})].concat(children));
}

function attemptNodes(a) {
  const parts = [];
  const facts = el("table", {cls: "kv"});
  const rows = [["outcome", a.verdict || a.outcome_label], ["duration", a.duration_text], ["model", a.model || "—"]];
  if (a.usage) rows.push(["tokens", a.usage.input_tokens + " in, " + a.usage.output_tokens + " out, " +
    a.usage.cache_read_tokens + " cache read, " + a.usage.cache_creation_tokens + " cache write (total " + a.usage.total_tokens + ")"]);
  const seen = a.activated_seen ? a.activated_seen.join(", ") + " (seen in the transcript; the attempt ended early)" : "not observable";
  rows.push(["skills loaded", a.activated === null ? seen : (a.activated.join(", ") || "none")]);
  if (a.expected !== null) rows.push(["expected", a.expected.join(", ") || "none"]);
  rows.forEach(function (r) { facts.appendChild(el("tr", {}, [el("th", {text: r[0]}), el("td", {text: String(r[1])})])); });
  parts.push(facts);
  const saidByCheck = a.checks.some(function (c) { return c.reason === a.reason || c.error === a.reason; });
  if (a.reason && !saidByCheck) parts.push(section("Reason", [pre(a.reason, "reason")]));
  if (a.error && a.error !== a.reason) parts.push(section("Error", [pre(a.error, "error")]));
  if (a.setup_cleanup.length) parts.push(section("Setup / cleanup", a.setup_cleanup.map(function (t) { return pre(t); })));
  if (a.checks.length) {
    parts.push(section("Checks", a.checks.map(function (c) {
      const judge = c.judge && c.judge.judge_backend ? " (judge " + c.judge.judge_backend + (c.judge.judge_model ? ":" + c.judge.judge_model : "") + ")" : "";
      const box = el("div", {cls: "check", "data-key": c.key}, [el("code", {text: c.key}), " ", verdict(c.passed), judge]);
      if (c.reason) box.appendChild(pre(c.reason, judge ? "judge-reasoning" : "check-reason"));
      if (c.error) box.appendChild(pre(c.error, "check-error"));
      return box;
    })));
  }
  if (a.forbidden_reads.length) parts.push(section("Forbidden reads", [pre(a.forbidden_reads.join("\n"))]));
  if (a.transcript === null) {
    parts.push(section("Transcript", [el("p", {cls: "note", text: "no transcript was recorded"})]));
  } else {
    parts.push(section("Transcript (" + a.transcript.length + " turns)", a.transcript.map(turnNode)));
  }
  parts.push(section("Final answer", a.final_answer ? answerNodes(a.final_answer) : [el("p", {cls: "note", text: "none"})]));
  if (typeof reviewSection === "function") parts.push(reviewSection(a));
  return parts;
}

/* The viewer's opening and closing, shared by the run and compare pages: a click on an
   attempt button (and Enter on a focused one) opens it; j / ArrowDown opens the next attempt
   still shown, k / ArrowUp the previous one (typing in a field is left alone); Escape closes
   the viewer. The address names the open attempt (#attempt=ID), so a link or a reload opens
   it again; closing clears it. replaceState keeps the back button for leaving the page.

   options.render(id, button) fills #viewer-title and #viewer-body for attempt id and returns
   false when there is no such attempt; options.shown() lists the attempt buttons still shown,
   in page order; options.button(id) finds an attempt's button; options.ids is a RegExp source
   matching exactly the ids the page's attempts have (an address naming anything else is
   ignored). Returns {open(id, button), close()}. */
function attemptViewer(options) {
  const viewer = document.getElementById("viewer");
  let openButton = null;

  function setFragment(hash) {
    const url = window.location.href.split("#")[0] + hash;
    try { window.history.replaceState(null, "", url); } catch (err) { /* file: in some browsers */ }
  }
  function open(id, button) {
    button = button || options.button(id);
    if (!options.render(id, button)) return;
    viewer.hidden = false;
    viewer.dataset.attempt = id;
    if (openButton) openButton.classList.remove("open");
    openButton = button || null;
    if (openButton) openButton.classList.add("open");
    viewer.scrollTop = 0;
    setFragment("#attempt=" + id);
  }
  function close() {
    viewer.hidden = true;
    if (openButton) openButton.classList.remove("open");
    openButton = null;
    setFragment("");
  }
  function onKey(e) {
    if (e.key === "Escape") { close(); return; }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    let step = 0;
    if (e.key === "j" || e.key === "ArrowDown") step = 1;
    else if (e.key === "k" || e.key === "ArrowUp") step = -1;
    if (!step) return;
    const shown = options.shown();
    if (!shown.length) return;
    e.preventDefault();
    let at = openButton ? shown.indexOf(openButton) : -1;
    at = at < 0 ? (step > 0 ? 0 : shown.length - 1) : Math.min(Math.max(at + step, 0), shown.length - 1);
    open(shown[at].dataset.id, shown[at]);
    shown[at].scrollIntoView({block: "nearest"});
  }
  document.getElementById("viewer-close").addEventListener("click", close);
  document.addEventListener("keydown", onKey);
  /* After every script of the page has run (the run page's review section comes later). */
  document.addEventListener("DOMContentLoaded", function () {
    const m = new RegExp("^#attempt=(" + options.ids + ")$").exec(window.location.hash);
    if (!m) return;
    const button = options.button(m[1]);
    open(m[1], button);
    if (button) button.scrollIntoView({block: "nearest"});
  });
  return {open: open, close: close};
}
