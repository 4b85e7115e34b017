/* The compare page: a click on an attempt of either run (or j / k, or an address
   #attempt=a-t0-a1, a- before and b- after; viewer.js) opens it in the viewer, headed by the
   final answers of the same attempt number in both runs side by side. Attempt details are
   parsed from the JSON blob the first time one is opened. */
(function () {
  let details = null;
  function data() {
    if (details === null) details = JSON.parse(document.getElementById("attempt-data").textContent);
    return details;
  }
  const SIDES = {a: "before", b: "after"};
  const body = document.getElementById("viewer-body");

  /* One column of the side-by-side: that run's attempt with the same number, or a note. */
  function answerColumn(row, side, number) {
    const button = row ? row.querySelector('button.att[data-side="' + side + '"][data-number="' + number + '"]') : null;
    const a = button ? data()[button.dataset.id] : null;
    const head = el("h4", {text: SIDES[side] + (a ? ", attempt " + a.attempt + ": " + (a.verdict || a.outcome_label) : "")});
    let content;
    if (!a) content = [el("p", {cls: "note", text: "no attempt " + number + " in this run"})];
    else if (!a.final_answer) content = [el("p", {cls: "note", text: "no final answer"})];
    else content = [el("div", {cls: "final-answer md-answer"}, markdownNodes(a.final_answer))];
    return el("div", {cls: "side-answer", "data-side": side}, [head].concat(content));
  }

  function render(id, button) {
    const a = data()[id];
    if (!a || !button) return false;
    const row = button.closest("tr");
    const number = button.dataset.number;
    const pair = el("section", {cls: "v-section", id: "side-by-side"}, [
      el("h3", {text: "Final answers of attempt " + number + ", side by side"}),
      el("div", {cls: "side-by-side"}, [answerColumn(row, "a", number), answerColumn(row, "b", number)])]);
    const side = button.dataset.side;
    const heading = el("h3", {cls: "viewer-side", text: "The " + SIDES[side] + " run's attempt"});
    /* The same attempt on the run's own page, when that page was written beside this one. */
    const page = document.querySelector('#run-pages a.run-page[data-side="' + side + '"]');
    if (page && /^t\d+-a\d+$/.test(a.run_attempt)) {
      heading.appendChild(document.createTextNode(" "));
      heading.appendChild(el("a", {cls: "run-attempt-link", href: page.getAttribute("href") + "#attempt=" + a.run_attempt,
        text: "open on the " + SIDES[side] + " run's page"}));
    }
    body.replaceChildren.apply(body, [pair, heading].concat(attemptNodes(a)));
    document.getElementById("viewer-title").textContent = a.task + " — " + SIDES[side] + ", attempt " + a.attempt;
    return true;
  }
  const viewer = attemptViewer({
    ids: "[ab]-t\\d+-a\\d+",
    button: function (id) { return document.querySelector('#compare-tasks button.att[data-id="' + id + '"]'); },
    shown: function () {
      return Array.from(document.querySelectorAll("#compare-tasks tr.cmp-row:not([hidden]) button.att"));
    },
    render: render,
  });
  document.getElementById("compare-tasks").addEventListener("click", function (e) {
    const button = e.target.closest("button.att");
    if (button) viewer.open(button.dataset.id, button);
  });

  /* The "different from the other run" view: only rows whose score or an attempt's outcome
     differs between the runs (also applied on load, for a box the browser kept ticked). */
  const onlyDifferent = document.getElementById("only-different");
  function applyOnlyDifferent() {
    document.querySelectorAll("#compare-tasks tr.cmp-row").forEach(function (row) {
      row.hidden = onlyDifferent.checked && row.dataset.differs !== "1";
    });
  }
  if (onlyDifferent) {
    onlyDifferent.addEventListener("change", applyOnlyDifferent);
    applyOnlyDifferent();
  }
})();
