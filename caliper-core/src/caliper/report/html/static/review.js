/* Human review in the page: in the viewer, a reader sets an attempt's verdict (pass / fail)
   with a note; the overrides are kept in the browser's local storage under the run's id (so a
   reload or a reopened page keeps them; nothing leaves the machine) and exported as the
   OVERRIDES file of `caliper review RUN OVERRIDES`, which saves them as a derived run. */
const reviewOverrides = new Map();
const reviewStore = "caliper-review:" + document.getElementById("review-export").dataset.run;

function reviewKey(task, attempt) { return JSON.stringify([task, attempt]); }

/* Keep the overrides and the reviewer's name (storage may be off: then they last the page). */
function reviewSave() {
  try {
    window.localStorage.setItem(reviewStore, JSON.stringify({
      reviewer: document.getElementById("review-name").value,
      overrides: Array.from(reviewOverrides.values())}));
  } catch (e) { /* no storage: kept in this page only */ }
}

function reviewLoad() {
  let doc = null;
  try { doc = JSON.parse(window.localStorage.getItem(reviewStore) || "null"); } catch (e) { doc = null; }
  if (!doc || !Array.isArray(doc.overrides)) return;
  for (const o of doc.overrides) {
    if (o && typeof o.task === "string" && Number.isInteger(o.attempt) &&
        (o.verdict === "pass" || o.verdict === "fail") && typeof o.note === "string") {
      reviewOverrides.set(reviewKey(o.task, o.attempt),
        {task: o.task, attempt: o.attempt, verdict: o.verdict, note: o.note});
    }
  }
  if (typeof doc.reviewer === "string") document.getElementById("review-name").value = doc.reviewer;
}

function reviewCount() {
  const n = reviewOverrides.size;
  document.getElementById("review-count").textContent = n + " override(s)";
  document.getElementById("review-export").disabled = n === 0;
  reviewSave();
}

/* The viewer's review section for attempt `a` (its task name and 1-based number). */
function reviewSection(a) {
  const key = reviewKey(a.task, a.attempt);
  const saved = reviewOverrides.get(key);
  const verdict = el("select", {cls: "review-verdict", "aria-label": "your verdict"}, [
    el("option", {value: "pass", text: "pass"}), el("option", {value: "fail", text: "fail"})]);
  verdict.value = saved ? saved.verdict : (a.outcome === "pass" ? "fail" : "pass");
  const note = el("textarea", {cls: "review-note", rows: "2", placeholder: "why (required)"});
  note.value = saved ? saved.note : "";
  const status = el("span", {cls: "note review-status", text: saved ? "overridden: " + saved.verdict : ""});
  const set = el("button", {type: "button", cls: "review-set", text: "Override verdict"});
  const clear = el("button", {type: "button", cls: "review-clear", text: "Remove override"});
  set.addEventListener("click", function () {
    if (!note.value.trim()) { status.textContent = "a note is required"; return; }
    reviewOverrides.set(key, {task: a.task, attempt: a.attempt, verdict: verdict.value, note: note.value.trim()});
    status.textContent = "overridden: " + verdict.value;
    reviewCount();
  });
  clear.addEventListener("click", function () {
    reviewOverrides.delete(key);
    status.textContent = "";
    reviewCount();
  });
  return el("section", {cls: "v-section review"}, [el("h3", {text: "Your review"}),
    el("label", {}, ["Verdict ", verdict]), " ", set, " ", clear, " ", status, note]);
}

document.getElementById("review-export").addEventListener("click", function () {
  const reviewer = document.getElementById("review-name").value.trim();
  const doc = {run: document.getElementById("review-export").dataset.run, reviewer: reviewer || null,
    overrides: Array.from(reviewOverrides.values())};
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2) + "\n"], {type: "application/json"}));
  const link = el("a", {href: url, download: document.getElementById("review-export").dataset.name + ".overrides.json"});
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
});

document.getElementById("review-name").addEventListener("change", reviewSave);
reviewLoad();
reviewCount();
