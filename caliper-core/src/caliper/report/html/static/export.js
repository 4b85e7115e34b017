/* Export of the attempt table as CSV or JSON Lines, built in the browser from the page's
   attempt data and downloaded as a Blob (nothing leaves the machine). The rows, their
   columns and number format are those of `caliper report RUN --format csv|jsonl`
   (caliper.report.attempt_table); the page exports the attempts the filters show, in the
   run's order. attemptTable needs the attempt data unpacked (attempts.js); the buttons wait
   for it. */
const TABLE_COLUMNS = ["task", "attempt", "outcome", "kind", "verdict", "duration_seconds",
  "input_tokens", "output_tokens", "total_tokens", "activated", "expected", "final_answer"];

function attemptTableRows(onlyShown) {
  const all = loadedAttempts();
  const buttons = Array.from(document.querySelectorAll("#tasks button.att"));
  const kinds = {}, shown = {};
  buttons.forEach(function (b) {
    kinds[b.dataset.id] = b.dataset.kind;
    shown[b.dataset.id] = !b.classList.contains("filtered") && !b.closest("tr").classList.contains("filtered");
  });
  const order = function (id) { const m = /^t(\d+)-a(\d+)$/.exec(id); return [Number(m[1]), Number(m[2])]; };
  const ids = Object.keys(all).filter(function (id) { return !onlyShown || shown[id]; });
  ids.sort(function (x, y) { const a = order(x), b = order(y); return a[0] - b[0] || a[1] - b[1]; });
  return ids.map(function (id) {
    const a = all[id], u = a.usage;
    return {task: a.task, attempt: a.attempt, outcome: a.outcome, kind: kinds[id], verdict: a.verdict,
      duration_seconds: a.duration, input_tokens: u ? u.input_tokens : null,
      output_tokens: u ? u.output_tokens : null, total_tokens: u ? u.total_tokens : null,
      activated: a.activated, expected: a.expected, final_answer: a.final_answer};
  });
}

function csvField(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return String(value);
  let text = Array.isArray(value) ? value.join(" ") : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = "'" + text;
  if (/[,"\r\n]/.test(text)) text = '"' + text.replace(/"/g, '""') + '"';
  return text;
}

function attemptTable(format, onlyShown) {
  const rows = attemptTableRows(onlyShown);
  if (format === "jsonl") {
    return rows.map(function (r) {
      const ordered = {};
      TABLE_COLUMNS.forEach(function (c) { ordered[c] = r[c] === undefined ? null : r[c]; });
      return JSON.stringify(ordered) + "\n";
    }).join("");
  }
  return [TABLE_COLUMNS.join(",")].concat(rows.map(function (r) {
    return TABLE_COLUMNS.map(function (c) { return csvField(r[c]); }).join(",");
  })).join("\n") + "\n";
}

document.querySelectorAll("button.export").forEach(function (button) {
  button.addEventListener("click", function () { withAttempts(download); });
  function download() {
    const format = button.dataset.format;
    const text = attemptTable(format, true);
    const type = format === "csv" ? "text/csv" : "application/x-ndjson";
    const url = URL.createObjectURL(new Blob([text], {type: type + ";charset=utf-8"}));
    const link = el("a", {href: url, download: button.dataset.name + "." + format});
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }
});
