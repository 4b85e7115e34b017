/* The attempt viewer's content, shared by the run and compare pages: an attempt's facts,
   checks, transcript and final answer as DOM nodes. Text only ever goes in as text
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
