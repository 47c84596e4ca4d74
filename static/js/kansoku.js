// Draws every chart on the page from its inline JSON (no request leaves the site).
(function () {
  "use strict";
  function draw(div) {
    var id = div.getAttribute("data-figure");
    var holder = div.parentNode.querySelector('script.chart-data[data-for="' + id + '"]');
    if (!holder || !window.Plotly) { return; }
    var fig = JSON.parse(holder.textContent);
    var config = { responsive: true, displaylogo: false,
                   modeBarButtonsToRemove: ["sendDataToCloud", "lasso2d", "select2d"] };
    window.Plotly.newPlot(div, fig.data, fig.layout, config).then(function () {
      div.setAttribute("data-rendered", "true");
    });
  }
  function init() {
    var charts = document.querySelectorAll("div.chart[data-figure]");
    for (var i = 0; i < charts.length; i++) { draw(charts[i]); }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
