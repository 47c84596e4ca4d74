// The runs behind a table or figure with many runs, loaded when its panel is opened
// (layouts/partials/provenance-lazy.html): the list is fetched once from data-prov-src (the item's
// provenance JSON, written by render/hugo.py) and drawn as provenance.html draws a short one.
(function () {
  if (window.kansokuProvenance) return;  // the script is referenced by every such panel of a page
  window.kansokuProvenance = true;

  function runLink(run, panel) {
    var pages = panel.getAttribute("data-run-pages"), sources = panel.getAttribute("data-sources");
    var el = document.createElement(pages || sources ? "a" : "span");
    if (pages) el.setAttribute("href", pages + run.anchor + panel.getAttribute("data-run-page-suffix"));
    else if (sources) el.setAttribute("href", sources + "#" + run.anchor);
    el.setAttribute("title", run.id);
    if (run.representative) el.className = "rep-run";
    el.textContent = run.rep + (run.representative ? "★" : "");
    return el;
  }

  function draw(panel, prov) {
    var lang = panel.getAttribute("data-lang");
    var body = panel.querySelector("tbody");
    body.textContent = "";
    prov.groups.forEach(function (g) {
      var tr = document.createElement("tr");
      g.values.forEach(function (v) {
        var td = document.createElement("td");
        td.textContent = v[lang];
        tr.appendChild(td);
      });
      var reps = document.createElement("td");
      reps.className = "reps";
      g.runs.forEach(function (run) {
        reps.appendChild(runLink(run, panel));
        reps.appendChild(document.createTextNode(" "));
      });
      tr.appendChild(reps);
      body.appendChild(tr);
    });
  }

  function load(panel) {
    if (!panel.open || panel.getAttribute("data-loaded")) return;
    panel.setAttribute("data-loaded", "loading");
    fetch(panel.getAttribute("data-prov-src"))
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (prov) { draw(panel, prov); panel.setAttribute("data-loaded", "true"); })
      .catch(function () {
        panel.removeAttribute("data-loaded");
        var cell = panel.querySelector(".prov-loading td");
        if (cell) cell.textContent = panel.getAttribute("data-failed");
      });
  }

  function init() {
    document.querySelectorAll("details.provenance[data-prov-src]").forEach(function (panel) {
      panel.addEventListener("toggle", function () { load(panel); });
      load(panel);  // opened before the script ran (a link to it, or the reader was quick)
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
