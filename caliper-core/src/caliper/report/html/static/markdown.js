/* A small Markdown renderer for agents' answers that cannot produce markup it was not
   written to: it builds DOM nodes with el() / text nodes only (never innerHTML), so any HTML
   in the answer shows as text. It knows headings (#), fenced code (```), block quotes (>),
   lists (-, *, +, 1.), horizontal rules, and inline `code`, **bold**, *italic* / _italic_ and
   [text](url). Links and images are shown as their text followed by the address in plain
   text: nothing in an answer can navigate or load anything. */
function markdownNodes(source) {
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  let i = 0;
  function isBlockStart(line) {
    return /^(#{1,6}\s|```|>|\s*([-*+]|\d+[.)])\s|\s*([-*_])(\s*\3){2,}\s*$)/.test(line);
  }
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) { i += 1; continue; }
    let m;
    if ((m = /^```\s*([\w+-]*)/.exec(line))) {
      const code = [];
      i += 1;
      while (i < lines.length && !/^```/.test(lines[i])) { code.push(lines[i]); i += 1; }
      i += 1;
      out.push(el("pre", {cls: "md-code"}, [el("code", {text: code.join("\n")})]));
    } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      out.push(el("h" + Math.min(m[1].length + 3, 6), {cls: "md-h"}, inlineNodes(m[2])));
      i += 1;
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push(el("hr"));
      i += 1;
    } else if (/^>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^>/.test(lines[i])) { quoted.push(lines[i].replace(/^>\s?/, "")); i += 1; }
      out.push(el("blockquote", {}, markdownNodes(quoted.join("\n"))));
    } else if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(line))) {
      const ordered = /\d/.test(m[1]);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]))) {
        list.appendChild(el("li", {}, inlineNodes(m[2])));
        i += 1;
      }
      out.push(list);
    } else {
      const para = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && (para.length === 0 || !isBlockStart(lines[i]))) {
        para.push(lines[i]);
        i += 1;
      }
      out.push(el("p", {}, inlineNodes(para.join("\n"))));
    }
  }
  return out;
}

/* Inline spans of one block as nodes: code first (its content is literal), then links
   (an address may hold one level of balanced parentheses), bold and italic; everything
   else is a text node. */
function inlineNodes(text) {
  const pattern = /(`+)([\s\S]+?)\1|!?\[([^\]\n]*)\]\(((?:[^()\s]|\([^()\s]*\))*)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|\b_([^_\n]+)_\b/g;
  const nodes = [];
  let last = 0, m;
  while ((m = pattern.exec(text)) !== null) {
    if (m.index > last) nodes.push(text.slice(last, m.index));
    if (m[1]) nodes.push(el("code", {text: m[2]}));
    else if (m[4] !== undefined) nodes.push(el("span", {cls: "md-link"}, inlineNodes(m[3]).concat([el("span", {cls: "md-url", text: " <" + m[4] + ">"})])));
    else if (m[5] || m[6]) nodes.push(el("strong", {}, inlineNodes(m[5] || m[6])));
    else nodes.push(el("em", {}, inlineNodes(m[7] || m[8])));
    last = pattern.lastIndex;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}
