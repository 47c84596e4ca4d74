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
  function init() { openTarget(); markWide(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
