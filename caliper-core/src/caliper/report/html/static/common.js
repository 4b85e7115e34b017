"use strict";
/* Helpers shared by every caliper page. Data is only ever put into the page as text
   (textContent / setAttribute), never parsed as HTML. */
function el(tag, attrs, children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const key of Object.keys(attrs)) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    }
  }
  for (const child of children || []) {
    if (child === null || child === undefined) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/* Sortable tables: a click on a <th data-sort="key" data-type="num|text"> sorts the rows of
   its table by the rows' data-<key> attribute; a second click reverses. */
function makeSortable(table) {
  const heads = table.querySelectorAll("th[data-sort]");
  heads.forEach(function (th) {
    th.addEventListener("click", function () {
      const key = th.dataset.sort;
      const numeric = th.dataset.type === "num";
      const asc = !th.classList.contains("sorted-asc");
      heads.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
      th.classList.add(asc ? "sorted-asc" : "sorted-desc");
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        const x = a.dataset[key] || "", y = b.dataset[key] || "";
        let c;
        if (numeric) {
          if (x === "" && y === "") c = 0;
          else if (x === "") return 1;   /* no value: always last */
          else if (y === "") return -1;
          else c = parseFloat(x) - parseFloat(y);
        } else {
          c = x.localeCompare(y);
        }
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
}
document.querySelectorAll("table.grid").forEach(makeSortable);
