/* The run page: filters, the transcript viewer. Attempt details are parsed from the JSON
   blob the first time one is opened, and each attempt's DOM is built only when opened. */
(function () {
  let details = null;
  function data() {
    if (details === null) details = JSON.parse(document.getElementById("attempt-data").textContent);
    return details;
  }

  /* The viewer (viewer.js: clicks, keys, the #attempt=t0-a1 address) over the attempts the
     filters still show. */
  const body = document.getElementById("viewer-body");
  const viewer = attemptViewer({
    ids: "t\\d+-a\\d+",
    button: function (id) { return document.querySelector('#tasks button.att[data-id="' + id + '"]'); },
    shown: function () {
      return Array.from(document.querySelectorAll("#tasks tr.task-row:not(.filtered) button.att:not(.filtered)"));
    },
    render: function (id) {
      const a = data()[id];
      if (!a) return false;
      body.replaceChildren.apply(body, attemptNodes(a));
      document.getElementById("viewer-title").textContent = a.task + " — attempt " + a.attempt;
      return true;
    },
  });
  document.getElementById("tasks").addEventListener("click", function (e) {
    const button = e.target.closest("button.att");
    if (button) viewer.open(button.dataset.id, button);
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
})();
