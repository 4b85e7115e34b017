/* The matrix page: a click on a cell opens that engine's attempts of the task in the viewer
   (viewer.js), with the cell's attempt strip on top to move between them; "answers side by
   side" sets attempt i of every engine in columns, with verdicts. Attempt details come from
   the page's packed attempt data (attempts.js: a click waits for it to be unpacked); all text
   goes in as text (el()). */
(function () {
  function data() { return loadedAttempts(); }
  const engines = JSON.parse(document.getElementById("matrix-engines").textContent);
  const viewer = document.getElementById("viewer");
  const body = document.getElementById("viewer-body");
  const answers = document.getElementById("answers");
  const answersBody = document.getElementById("answers-body");
  let openCell = null;

  function attemptId(engine, row, index) { return "e" + engine + "-t" + row + "-a" + index; }

  /* The viewer's strip: the cell's attempts again, the shown one marked. */
  function cellStrip(cell, shownId) {
    const strip = el("div", {cls: "strip", id: "viewer-strip"});
    cell.querySelectorAll("button.att").forEach(function (b) {
      const copy = el("button", {type: "button", cls: b.className.replace(" open", "") + (b.dataset.id === shownId ? " open" : ""),
        "data-id": b.dataset.id, title: b.title, text: b.textContent});
      copy.addEventListener("click", function () { openAttempt(b.dataset.id); });
      strip.appendChild(copy);
    });
    return strip;
  }

  function openAttempt(id) {
    const a = data()[id];
    if (!a) return;
    const parts = id.split("-");
    const cell = document.querySelector('#matrix-grid tr.mx-row[data-row="' + parts[1].slice(1) + '"] td.mx-cell[data-engine="' + parts[0].slice(1) + '"]');
    body.replaceChildren.apply(body, [cellStrip(cell, id)].concat(attemptNodes(a)));
    document.getElementById("viewer-title").textContent = a.task + " — " + a.engine + ", attempt " + a.attempt;
    viewer.hidden = false;
    viewer.dataset.attempt = id;
    if (openCell) openCell.classList.remove("open");
    openCell = cell;
    cell.classList.add("open");
    viewer.scrollTop = 0;
  }
  function closeViewer() {
    viewer.hidden = true;
    if (openCell) openCell.classList.remove("open");
    openCell = null;
  }

  function answerCell(engine, row, index) {
    const a = data()[attemptId(engine, row, index)];
    if (!a) return el("td", {cls: "mx-answer none", "data-engine": String(engine)}, [el("span", {cls: "note", text: "no such attempt"})]);
    const head = el("div", {}, [el("span", {cls: "verdict-tag o-" + a.outcome, text: a.verdict || a.outcome_label})]);
    const open = el("button", {type: "button", cls: "mx-open", text: "open attempt " + a.attempt});
    open.addEventListener("click", function () { openAttempt(attemptId(engine, row, index)); });
    head.appendChild(open);
    const text = a.final_answer
      ? el("div", {cls: "mx-answer-text final-answer md-answer"}, markdownNodes(a.final_answer))
      : el("p", {cls: "note", text: "no final answer"});
    return el("td", {cls: "mx-answer", "data-engine": String(engine)}, [head, text]);
  }

  function openAnswers(row) {
    const tr = document.querySelector('#matrix-grid tr.mx-row[data-row="' + row + '"]');
    let count = 0;
    engines.forEach(function (_, e) { while (data()[attemptId(e, row, count)]) count++; });
    const head = el("tr", {}, [el("th", {cls: "mx-attempt", text: "attempt"})].concat(
      engines.map(function (label) { return el("th", {text: label}); })));
    const rows = [];
    for (let i = 0; i < count; i++) {
      rows.push(el("tr", {"data-index": String(i)}, [el("th", {cls: "mx-attempt", text: String(i + 1)})].concat(
        engines.map(function (_, e) { return answerCell(e, row, i); }))));
    }
    const table = el("table", {id: "answers-table"}, [el("thead", {}, [head]), el("tbody", {}, rows)]);
    answersBody.replaceChildren(table);
    document.getElementById("answers-title").textContent = tr.dataset.name + " — final answers side by side";
    answers.hidden = false;
    answers.scrollTop = 0;
  }
  function closeAnswers() { answers.hidden = true; }

  document.getElementById("viewer-close").addEventListener("click", closeViewer);
  document.getElementById("answers-close").addEventListener("click", closeAnswers);
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    if (!viewer.hidden) closeViewer();
    else closeAnswers();
  });
  document.getElementById("matrix-grid").addEventListener("click", function (e) {
    const more = e.target.closest("button.mx-answers");
    if (more) { withAttempts(function () { openAnswers(more.dataset.row); }); return; }
    const button = e.target.closest("button.att");
    if (button) { withAttempts(function () { openAttempt(button.dataset.id); }); return; }
    const cell = e.target.closest("td.mx-cell");
    const first = cell ? cell.querySelector("button.att") : null;
    if (first) withAttempts(function () { openAttempt(first.dataset.id); });
  });
})();
