/* The run page: filters, the transcript viewer. Attempt details are parsed from the JSON
   blob the first time one is opened, and each attempt's DOM is built only when opened. */
(function () {
  const TRUNCATE = 2000;
  let details = null;
  function data() {
    if (details === null) details = JSON.parse(document.getElementById("attempt-data").textContent);
    return details;
  }

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

  function render(a) {
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

  const viewer = document.getElementById("viewer");
  const body = document.getElementById("viewer-body");
  let openButton = null;
  function open(id, button) {
    const a = data()[id];
    if (!a) return;
    body.replaceChildren.apply(body, render(a));
    document.getElementById("viewer-title").textContent = a.task + " — attempt " + a.attempt;
    viewer.hidden = false;
    viewer.dataset.attempt = id;
    if (openButton) openButton.classList.remove("open");
    openButton = button || document.querySelector('button.att[data-id="' + id + '"]');
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
  /* The address names the open attempt (#attempt=t0-a1), so a link opens it again;
     replaceState keeps the back button for leaving the page. */
  function setFragment(hash) {
    const url = window.location.href.split("#")[0] + hash;
    try { window.history.replaceState(null, "", url); } catch (err) { /* file: in some browsers */ }
  }
  document.getElementById("viewer-close").addEventListener("click", close);
  document.addEventListener("keydown", onKey);
  document.getElementById("tasks").addEventListener("click", function (e) {
    const button = e.target.closest("button.att");
    if (button) open(button.dataset.id, button);
  });

  const fOutcome = document.getElementById("f-outcome");
  const fTask = document.getElementById("f-task");
  const fSkill = document.getElementById("f-skill");
  const count = document.getElementById("f-count");
  const fSearch = document.getElementById("f-search");
  const searchError = document.getElementById("f-search-error");
  let search = null, searchTimer = null, haystacks = null;

  /* Outcome filter: one outcome, or a failures view. "failed" and "unusable" come from the
     page's data-kind (the run's --timeouts policy decides where a timeout goes). */
  function outcomeMatches(button, outcome) {
    const kind = button.dataset.kind;
    if (!outcome) return true;
    if (outcome === "-failures-") return kind === "failed" || kind === "unusable";
    if (outcome === "-failed-") return kind === "failed";
    if (outcome === "-unusable-") return kind === "unusable";
    return button.dataset.outcome === outcome;
  }

  /* Search: a case-insensitive regular expression over each attempt's final answer, its
     transcript's text, tool inputs and tool outputs (the text is gathered the first time). */
  function haystack(id) {
    if (haystacks === null) {
      haystacks = {};
      const all = data();
      Object.keys(all).forEach(function (key) {
        const a = all[key], parts = [a.final_answer || ""];
        (a.transcript || []).forEach(function (t) {
          if (t.content) parts.push(t.content);
          if (t.tool_input !== undefined && t.tool_input !== null) parts.push(asText(t.tool_input));
          if (t.tool_output !== undefined && t.tool_output !== null) parts.push(asText(t.tool_output));
        });
        haystacks[key] = parts.join("\n");
      });
    }
    return haystacks[id] || "";
  }
  function setSearch(text) {
    search = null;
    searchError.hidden = true;
    fSearch.classList.remove("bad");
    if (!text) return;
    try {
      search = new RegExp(text, "i");
    } catch (err) {
      searchError.textContent = "not a regular expression: " + err.message;
      searchError.hidden = false;
      fSearch.classList.add("bad");
    }
  }
  function searchMatches(id) { return search === null || search.test(haystack(id)); }

  /* Keys: j / ArrowDown opens the next attempt still shown by the filters, k / ArrowUp the
     previous one; Escape closes the viewer and clears the address fragment. Typing in a
     field is left alone. */
  function onKey(e) {
    if (e.key === "Escape") { close(); return; }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    let step = 0;
    if (e.key === "j" || e.key === "ArrowDown") step = 1;
    else if (e.key === "k" || e.key === "ArrowUp") step = -1;
    if (!step) return;
    const shown = Array.from(document.querySelectorAll("#tasks tr.task-row:not(.filtered) button.att:not(.filtered)"));
    if (!shown.length) return;
    e.preventDefault();
    let at = openButton ? shown.indexOf(openButton) : -1;
    at = at < 0 ? (step > 0 ? 0 : shown.length - 1) : Math.min(Math.max(at + step, 0), shown.length - 1);
    open(shown[at].dataset.id, shown[at]);
    shown[at].scrollIntoView({block: "nearest"});
  }
  function applyFilters() {
    const outcome = fOutcome.value, task = fTask.value.trim().toLowerCase(), skill = fSkill.value;
    let shown = 0, total = 0, rowsShown = 0;
    document.querySelectorAll("#tasks tr.task-row").forEach(function (row) {
      const nameOk = !task || row.dataset.name.toLowerCase().includes(task);
      let visible = 0;
      row.querySelectorAll("button.att").forEach(function (b) {
        total += 1;
        const fired = b.dataset.fired ? b.dataset.fired.split(" ") : [];
        let ok = nameOk && outcomeMatches(b, outcome) && searchMatches(b.dataset.id);
        if (ok && skill === "-none-") ok = b.dataset.observed === "1" && fired.length === 0;
        else if (ok && skill) ok = fired.indexOf(skill) >= 0;
        b.classList.toggle("filtered", !ok);
        if (ok) visible += 1;
      });
      const filtering = outcome || task || skill || search;
      row.classList.toggle("filtered", Boolean(filtering) && visible === 0);
      if (!row.classList.contains("filtered")) rowsShown += 1;
      shown += visible;
    });
    count.textContent = shown + " of " + total + " attempts";
    document.getElementById("no-match").hidden = rowsShown > 0;
  }
  [fOutcome, fSkill].forEach(function (f) { f.addEventListener("change", applyFilters); });
  fSearch.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { setSearch(fSearch.value); applyFilters(); }, 150);
  });
  fTask.addEventListener("input", applyFilters);
  document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });

  /* After the whole script has run (the review section is defined after this file). */
  document.addEventListener("DOMContentLoaded", function () {
    const m = /^#attempt=(t\d+-a\d+)$/.exec(window.location.hash);
    if (m) open(m[1]);
  });
})();
