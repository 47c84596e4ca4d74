// Draws every chart of the page from its inline JSON with the plotly.js bundle the site serves.
// No request leaves the site: no CDN, no fonts, no MathJax, no "edit in Chart Studio" link.
(function () {
  "use strict";
  var drawn = [];
  function config(id) {
    return {
      responsive: true, displaylogo: false, showLink: false, showSendToCloud: false,
      modeBarButtonsToRemove: ["sendDataToCloud", "lasso2d", "select2d"],
      toImageButtonOptions: { format: "svg", filename: id }
    };
  }
  // A run page writes its per-second series once (script#run-series); its traces name their columns.
  var series = null;
  function columns(traces) {
    for (var i = 0; i < (traces || []).length; i++) {
      var t = traces[i];
      if (!t.xcol && !t.ycol) { continue; }
      if (series === null) {
        var el = document.getElementById("run-series");
        series = el ? JSON.parse(el.textContent) : {};
      }
      if (t.xcol) { t.x = series[t.xcol] || []; delete t.xcol; }
      if (t.ycol) { t.y = series[t.ycol] || []; delete t.ycol; }
    }
  }
  function draw(div) {
    var id = div.getAttribute("data-figure");
    var holder = div.parentNode.querySelector('script.chart-data[data-for="' + id + '"]');
    if (!holder || !window.Plotly) { return; }
    var fig = JSON.parse(holder.textContent);
    columns(fig.data);
    var layout = fig.layout || {};
    if (window.matchMedia && window.matchMedia("(max-width: 600px)").matches) {
      // narrower side margins; the top margin stays the toolbar's room (the legend is at the bottom)
      var m = layout.margin || {};
      // keep room made for long labels, and for a second y axis on the right (its ticks and title)
      // (a chart whose rows are labelled inside the plot, with no tick labels, keeps its own narrow margin)
      var own = layout.yaxis && layout.yaxis.showticklabels === false;
      layout.margin = Object.assign({}, m, { l: m.l > 64 || own ? m.l : 48, r: layout.yaxis2 ? Math.min(m.r || 48, 48) : (own ? m.r : 8) });
      layout.font = Object.assign({}, layout.font || {}, { size: 11 });
      if (layout.legend) { layout.legend = Object.assign({}, layout.legend, { font: { size: 10 } }); }
    }
    // a figure of its own height needs no reserved height (a run page's 300 px charts left 80 px of white
    // under their legend, and their titles read as the next chart's); an autosized one keeps it
    if (layout.height) { div.style.minHeight = "0"; }
    div.innerHTML = "";
    window.Plotly.newPlot(div, fig.data, layout, config(id)).then(function () {
      div.setAttribute("data-rendered", "true");
      div.setAttribute("data-traces", String((div._fullData || fig.data).length));
      drawn.push(div);
    });
  }
  function resizeAll() {
    for (var i = 0; i < drawn.length; i++) { window.Plotly.Plots.resize(drawn[i]); }
  }
  function init() {
    var charts = document.querySelectorAll("div.chart[data-figure]");
    for (var i = 0; i < charts.length; i++) { draw(charts[i]); }
    // Printing: redraw at the paper's width, and back.
    window.addEventListener("beforeprint", resizeAll);
    window.addEventListener("afterprint", resizeAll);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
