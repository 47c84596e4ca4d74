// Content wider than its box (a wide table on a phone, the compare table): the box gets .is-wide (its first
// column stays in view, kansoku.css) and a cue above it in the page's words (its data-cue), so that nothing
// is cut off without the reader being told it scrolls. Loaded on every page; no request leaves the site.
(function () {
  "use strict";
  function markWide() {
    var boxes = document.querySelectorAll("[data-cue]");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var wide = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("is-wide", wide);
      if (wide) { watchCovered(box); } else { box.querySelectorAll(".covered").forEach(function (c) { c.classList.remove("covered"); }); }
      var cue = box.previousElementSibling;
      var has = cue && cue.classList.contains("scroll-cue");
      if (wide && !has) {
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.textContent = box.getAttribute("data-cue");
        box.parentNode.insertBefore(cue, box);
      } else if (!wide && has) {
        cue.parentNode.removeChild(cue);
      }
    }
  }
  // A date, a range of numbers, a number and its unit or per cent sign, "n = 5": one token to a reader, never
  // broken across two lines (whatever wrote the text: prose, a table, a note), so each is set in a span that
  // does not break; the text copied stays the same. Before markWide: it changes what is wide.
  var TOGETHER = /\d{4}-\d{2}-\d{2}|\d[\d,.]*–\d[\d,.]*(?:\s?%)?|[-+]?\d[\d,.]*\s?%|\bn = \d+|\d[\d,.]*\s(?:ms|s|GiB|MiB|KiB|GB|MB|TPS|tps)(?![\w])/g;
  // in code a line may wrap (a command in a table cell, an option in a sentence), but never between an option
  // and its value ("-f" at a line's end, "scripts/read.sql" at the next one's start): the option is kept with
  // its value, or with the value's start when the value is long (a list of pids wraps after it)
  var OPTION_VALUE = /(?<!\S)--?[A-Za-z][\w-]* (?!-)(?:\S{1,30}(?!\S)|\S{1,12})/g;
  function keepTogether() {
    var root = document.querySelector("main") || document.body;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, null);
    var found = [];
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      var el = n.parentElement;
      if (!el || el.closest("pre, script, style, svg, .js-plotly-plot, .nobr")) { continue; }
      var pattern = el.closest("code") ? OPTION_VALUE : TOGETHER;
      pattern.lastIndex = 0;
      if (pattern.test(n.nodeValue)) { found.push([n, pattern]); }
    }
    found.forEach(function (hit) {
      var node = hit[0], pattern = hit[1];
      var s = node.nodeValue, frag = document.createDocumentFragment(), last = 0, m;
      pattern.lastIndex = 0;
      while ((m = pattern.exec(s))) {
        if (m.index > last) { frag.appendChild(document.createTextNode(s.slice(last, m.index))); }
        var span = document.createElement("span");
        span.className = "nobr";
        span.textContent = m[0];
        frag.appendChild(span);
        last = m.index + m[0].length;
      }
      if (last < s.length) { frag.appendChild(document.createTextNode(s.slice(last))); }
      node.parentNode.replaceChild(frag, node);
    });
  }
  // A wide table keeps its first column and its verdicts in view (kansoku.css) and scrolls the columns
  // between under them. A cell partly under a kept column would show part of its number ("539" of 5397.5) or,
  // hidden, read as empty: its text is moved into the cell's visible part (a transform: the table's layout
  // stays); only a text wider than that part is hidden (.covered) until the scroll brings it clear.
  function pinned(c) {
    var st = window.getComputedStyle(c);
    return st.position === "sticky";
  }
  function textBox(c) {
    // the cell's contents in one inline box, made once, that the transform moves
    var t = c.firstElementChild;
    if (!t || !t.classList.contains("cell-text") || c.children.length !== 1 || c.childNodes.length !== 1) {
      t = document.createElement("span");
      t.className = "cell-text";
      while (c.firstChild) { t.appendChild(c.firstChild); }
      c.appendChild(t);
    }
    return t;
  }
  function hideCovered(box) {
    // the kept columns' edges, from the rows that keep cells; every row's cells (the header's too) between
    var left = -Infinity, right = Infinity, rows = box.querySelectorAll("tr"), i, j;
    for (i = 0; i < rows.length; i++) {
      for (j = 0; j < rows[i].children.length; j++) {
        var k = rows[i].children[j];
        if (k.colSpan > 1 || !pinned(k)) { continue; }
        var r = k.getBoundingClientRect();
        if (j === 0) { left = Math.max(left, r.right); } else { right = Math.min(right, r.left); }
      }
    }
    var bb = box.getBoundingClientRect(), width = bb.width;
    if (left > -Infinity) { box.style.setProperty("--kept-left", Math.round(left - bb.left) + "px"); }
    for (i = 0; i < rows.length; i++) {
      for (j = 0; j < rows[i].children.length; j++) {
        var c = rows[i].children[j], b = c.getBoundingClientRect();
        // a row group's label, wider than the box, stays; a spanner's is read from its start (moved to it)
        var under = !pinned(c) && b.width < width && c.textContent.trim() !== "" &&
          ((b.left < left - 1 && b.right > left + 1) || (b.left < right - 1 && b.right > right + 1));
        var t = c.querySelector(":scope > .cell-text");
        if (!under) {
          if (t) { t.style.transform = ""; }
          c.classList.remove("covered");
          continue;
        }
        t = textBox(c);
        t.style.transform = "";
        var tb = t.getBoundingClientRect(), lo = Math.max(b.left, left), hi = Math.min(b.right, right);
        var fits = tb.width <= hi - lo - 2 || c.colSpan > 1;
        var dx = tb.left < lo ? lo + 1 - tb.left : (tb.right > hi && c.colSpan === 1 ? hi - 1 - tb.right : 0);
        t.style.transform = fits && dx ? "translateX(" + Math.round(dx) + "px)" : "";
        c.classList.toggle("covered", !fits);
      }
    }
  }
  function watchCovered(box) {
    if (box.getAttribute("data-covered")) { hideCovered(box); return; }
    box.setAttribute("data-covered", "1");
    var queued = false;
    box.addEventListener("scroll", function () {
      if (queued) { return; }
      queued = true;
      window.requestAnimationFrame(function () { queued = false; hideCovered(box); });
    });
    hideCovered(box);
  }
  // A link to a run on the data-sources page (#run-…) opens that run's collapsed list of files.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) { return; }
    var ds = el.querySelectorAll("details.run-files");
    for (var i = 0; i < ds.length; i++) { ds[i].open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  var pending = null;
  window.addEventListener("resize", function () {
    if (pending) { window.clearTimeout(pending); }
    pending = window.setTimeout(markWide, 100);
  });
  // the spread switch above a table adds a line to its cells: the table may grow wider
  document.addEventListener("change", function (e) {
    if (e.target && e.target.classList && e.target.classList.contains("spread-switch")) { markWide(); }
  });
  function init() { keepTogether(); openTarget(); markWide(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
