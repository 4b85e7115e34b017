/* The page's attempt data, packed by the Python side (safe_json.packed_json): JSON,
   gzip-compressed and base64-encoded, as the text of the data element #attempt-data.
   The packed text is a fraction of the JSON's size, so the page parses quickly; it is unpacked
   once, by the browser's own DecompressionStream, starting right after the load event (or at
   the first need, if that comes sooner). withAttempts(fn) calls fn(data) at once when the data
   is unpacked, else when unpacking ends (in the order of the calls); should unpacking fail,
   the viewer says so. loadedAttempts() is the unpacked data, or null before. */
let attemptsValue = null, attemptsPromise = null;

function base64Bytes(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function attemptData() {
  if (attemptsPromise === null) {
    attemptsPromise = Promise.resolve().then(function () {
      const packed = document.getElementById("attempt-data").textContent.trim();
      const stream = new Blob([base64Bytes(packed)]).stream().pipeThrough(new DecompressionStream("gzip"));
      return new Response(stream).text();
    }).then(function (text) {
      attemptsValue = JSON.parse(text);
      return attemptsValue;
    });
  }
  return attemptsPromise;
}

function loadedAttempts() { return attemptsValue; }

function withAttempts(fn) {
  if (attemptsValue !== null) { fn(attemptsValue); return; }
  attemptData().then(fn, function (err) {
    const viewer = document.getElementById("viewer");
    document.getElementById("viewer-title").textContent = "The attempts could not be read";
    document.getElementById("viewer-body").replaceChildren(
      el("p", {cls: "note err", text: "This page's attempt data could not be unpacked: " + err}));
    viewer.hidden = false;
  });
}

window.addEventListener("load", function () { setTimeout(attemptData, 0); });
