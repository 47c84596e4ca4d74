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

  // Flame graphs (render/charts/profiles.py): every trace with meta.flame is one condition's frames, bars
  // from their left edge (base) as wide as their share, at the height of their depth. A click zooms into a
  // frame as flamegraph.pl does: its callees fill the panel, its callers stay below it, the rest is hidden;
  // every panel zooms to the same frame where it has it. The search box colours the matching frames and
  // says which share of the samples they hold. Labels are cut to their frame's width at the drawn size.
  var SEARCH_COLOR = "rgb(230,0,230)";  // flamegraph.pl's search highlight
  var FONT = 11;
  function plain(s) {  // a string of the figure's JSON, escaped for plotly's pseudo-HTML, as text
    return String(s).replace(/<br>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }
  function markup(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  var measure = null;
  function textWidth(s) {
    if (!measure) { measure = document.createElement("canvas").getContext("2d"); }
    measure.font = FONT + "px " + getComputedStyle(document.body).fontFamily;
    return measure.measureText(s).width;
  }
  function fit(label, px) {
    var room = px - 6;
    if (room <= 0) { return ""; }
    if (textWidth(label) <= room) { return label; }
    var lo = 0, hi = label.length;
    while (lo < hi) {  // the longest prefix that fits with its ".."
      var mid = Math.ceil((lo + hi) / 2);
      if (textWidth(label.slice(0, mid) + "..") <= room) { lo = mid; } else { hi = mid - 1; }
    }
    return lo >= 3 ? label.slice(0, lo) + ".." : "";
  }
  function flamePanels(div) {
    var out = [];
    (div.data || []).forEach(function (t, i) {
      if (!t.meta || !t.meta.flame) { return; }
      var parents = t.meta.flame.parents, labels = t.customdata.map(function (c) { return plain(c[0]); });
      var paths = [];
      for (var k = 0; k < parents.length; k++) {
        paths.push(parents[k] < 0 ? "" : paths[parents[k]] + "\u0000" + labels[k]);
      }
      var ax = (t.xaxis || "x").replace("x", "xaxis");
      out.push({ trace: i, axis: ax, parents: parents, labels: labels, paths: paths,
                 x: t.x.slice(), base: t.base.slice(), y: t.y.slice(),
                 color: Array.isArray(t.marker.color) ? t.marker.color.slice() : t.marker.color,
                 shown: t.y.slice(), zoom: null, matched: null });
    });
    return out;
  }
  function ancestorOf(p, k, j) {  // is j an ancestor of k (or k itself)
    for (var a = k; a >= 0; a = p.parents[a]) { if (a === j) { return true; } }
    return false;
  }
  function panelState(p, root) {
    // x, base, y and opacity of each frame for a zoom into frame ``root`` (null: none)
    var n = p.labels.length, x = p.x.slice(), base = p.base.slice(), y = p.y.slice(), op = [];
    for (var j = 0; j < n; j++) { op.push(1); }
    if (root !== null && p.parents[root] >= 0) {
      var s = p.base[root], w = p.x[root];
      for (j = 0; j < n; j++) {
        if (ancestorOf(p, j, root)) { continue; }       // a callee of the frame: as it is
        if (ancestorOf(p, root, j)) {                   // a caller: the zoomed width, dimmed
          base[j] = s; x[j] = w; op[j] = j === root ? 1 : 0.6;
        } else { y[j] = null; }                          // elsewhere: hidden
      }
      return { x: x, base: base, y: y, op: op, range: [s, s + w] };
    }
    return { x: x, base: base, y: y, op: op, range: [0, p.x[0]] };
  }
  function labelsFor(div, p, st) {
    var ax = div._fullLayout[p.axis];
    var px = ax ? ax._length / (st.range[1] - st.range[0]) : 7;
    return p.labels.map(function (l, j) { return st.y[j] === null || st.y[j] === undefined ? "" : markup(fit(l, st.x[j] * px)); });
  }
  function colorsFor(p) {
    if (!p.matched) { return p.color; }
    return p.labels.map(function (_, j) { return p.matched[j] ? SEARCH_COLOR : (Array.isArray(p.color) ? p.color[j] : p.color); });
  }
  function redraw(div, panels) {
    var upd = { x: [], base: [], y: [], text: [], "marker.color": [], "marker.opacity": [] }, idx = [], rel = {};
    panels.forEach(function (p) {
      var st = panelState(p, p.zoom);
      upd.x.push(st.x); upd.base.push(st.base); upd.y.push(st.y); upd.text.push(labelsFor(div, p, st));
      upd["marker.color"].push(colorsFor(p)); upd["marker.opacity"].push(st.op);
      idx.push(p.trace);
      rel[p.axis + ".range"] = st.range;
    });
    return window.Plotly.relayout(div, rel).then(function () { return window.Plotly.restyle(div, upd, idx); })
      .then(function () { div.setAttribute("data-zoomed", panels.some(function (p) { return p.zoom !== null; }) ? "true" : "false"); });
  }
  function flameTools(div, meta) {
    var panels = flamePanels(div);
    if (!panels.length) { return; }
    var words = meta.flame;
    var bar = document.createElement("div");
    bar.className = "flame-tools";
    var search = document.createElement("input");
    search.type = "search"; search.className = "flame-search";
    search.placeholder = plain(words.search); search.setAttribute("aria-label", plain(words.search));
    var reset = document.createElement("button");
    reset.type = "button"; reset.className = "flame-reset"; reset.textContent = plain(words.reset); reset.hidden = true;
    var status = document.createElement("span");
    status.className = "flame-matched"; status.setAttribute("aria-live", "polite");
    var hint = document.createElement("p");
    hint.className = "flame-hint"; hint.textContent = plain(words.hint);
    bar.appendChild(search); bar.appendChild(reset); bar.appendChild(status);
    div.parentNode.insertBefore(bar, div);
    div.parentNode.insertBefore(hint, div);
    function zoomTo(path) {
      panels.forEach(function (p) {
        var k = path === null ? -1 : p.paths.indexOf(path);
        p.zoom = k > 0 ? k : null;
      });
      reset.hidden = panels.every(function (p) { return p.zoom === null; });
      return redraw(div, panels);
    }
    div.on("plotly_click", function (ev) {
      var pt = ev && ev.points && ev.points[0];
      if (!pt) { return; }
      var p = panels.filter(function (q) { return q.trace === pt.curveNumber; })[0];
      if (!p) { return; }
      zoomTo(p.parents[pt.pointNumber] < 0 ? null : p.paths[pt.pointNumber]);
    });
    reset.addEventListener("click", function () { zoomTo(null); });
    function find() {
      var term = search.value.trim(), re = null;
      if (term) {
        try { re = new RegExp(term, "i"); } catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
      }
      var parts = [];
      panels.forEach(function (p, i) {
        p.matched = re ? p.labels.map(function (l, j) { return p.parents[j] >= 0 && re.test(l); }) : null;
        if (!re) { return; }
        // the matched share: matched frames not inside another matched frame (flamegraph.pl's rule)
        var share = 0;
        for (var j = 0; j < p.labels.length; j++) {
          if (!p.matched[j]) { continue; }
          var inside = false;
          for (var a = p.parents[j]; a >= 0; a = p.parents[a]) { if (p.matched[a]) { inside = true; break; } }
          if (!inside) { share += p.x[j]; }
        }
        var pct = p.x[0] ? 100 * share / p.x[0] : 0;
        var name = words.panels[i] && panels.length > 1 ? plain(words.panels[i].name) + " " : "";
        parts.push(name + pct.toFixed(1) + " %");
      });
      status.textContent = re ? plain(words.matched) + ": " + parts.join(", ") : "";
      div.setAttribute("data-matched", re ? String(panels.reduce(function (n, p) {
        return n + p.matched.filter(Boolean).length; }, 0)) : "");
      return redraw(div, panels);
    }
    search.addEventListener("input", find);
    // the top functions: a list a phone reads where the frames are too narrow for their names
    var box = document.createElement("details");
    box.className = "flame-top";
    if (window.matchMedia && window.matchMedia("(max-width: 600px)").matches) { box.open = true; }
    var sum = document.createElement("summary");
    sum.textContent = plain(words.top_title);
    box.appendChild(sum);
    words.panels.forEach(function (panel) {
      var t = document.createElement("table");
      if (words.panels.length > 1) {
        var cap = document.createElement("caption"); cap.textContent = plain(panel.name); t.appendChild(cap);
      }
      var head = t.createTHead().insertRow();
      words.top_columns.forEach(function (c, i) {
        var th = document.createElement("th"); th.textContent = plain(c); if (i) { th.className = "num"; } head.appendChild(th);
      });
      var body = t.createTBody();
      panel.rows.forEach(function (r) {
        var tr = body.insertRow();
        r.forEach(function (v, i) {
          var td = tr.insertCell();
          if (i) { td.textContent = plain(v); td.className = "num"; } else {
            // a long name may break after an underscore or between its words (hash_search_|with_hash_value,
            // Memory|Context|Reset), never inside one on a narrow phone
            plain(v).split(/(?<=_)|(?<=[a-z0-9])(?=[A-Z])/).forEach(function (part, k) {
              if (k) { td.appendChild(document.createElement("wbr")); }
              td.appendChild(document.createTextNode(part));
            });
            // a function's name searches for it in the flame graph
            td.className = "flame-fn"; td.tabIndex = 0;
            td.addEventListener("click", function () { search.value = plain(v); find(); });
          }
        });
      });
      box.appendChild(t);
    });
    div.parentNode.insertBefore(box, div.nextSibling);
    var again = null;
    window.addEventListener("resize", function () {
      clearTimeout(again);
      again = setTimeout(function () { redraw(div, panels); }, 200);
    });
    return redraw(div, panels);
  }
  // A legend held at the figure's foot grows upwards when it wraps (a phone) and plotly lifts the axis
  // title onto the tick labels: the figure taller by what the title lacks, the plot keeping its height.
  function roomForLegend(div, layout) {
    var lg = div.querySelector(".legend"), xt = div.querySelector(".g-xtitle");
    if (!lg || !xt || !layout.height || !layout.legend || layout.legend.yref !== "container") { return null; }
    var ticks = Array.prototype.map.call(div.querySelectorAll(".xtick text"), function (t) {
      return t.getBoundingClientRect().bottom;
    });
    if (!ticks.length) { return null; }
    var title = xt.getBoundingClientRect();
    var over = Math.max.apply(null, ticks) + 6 + title.height - lg.getBoundingClientRect().top;
    if (over <= 0) { return null; }
    var m = layout.margin || {};
    var grow = Math.ceil(over) + 4;
    return window.Plotly.relayout(div, { "margin.b": (m.b || 80) + grow, height: layout.height + grow });
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
      return roomForLegend(div, layout);
    }).then(function () {
      return layout.meta && layout.meta.flame ? flameTools(div, layout.meta) : null;
    }).then(function () {
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
