"""The reader's checks: every kind of page — report cover, chapter, methods, sources, appendix,
compare page, run page, trends page, a past report's chapter — in ja and en, at 1280 px and on a 390 × 844
phone, in a real Chromium, checked for what a demanding reader met:

- raw markup in a hover ("<br>" printed, "&lt;br&gt;" in a trace's text);
- an element wider than its box without the scroll cue (a table cut at its last column), or the page
  wider than the phone;
- on a phone, a table's first column and its verdict column not both in view, a cell showing part of
  its number from under them, or a cell in view that reads empty (its text hidden) where the page opens;
- a chart's title nearer the neighbouring chart than its own;
- a chart's plot area squeezed on a phone, its tick labels cut at the figure's edge, or a marker cut at the
  plot area's edge;
- English unit words in Japanese headers, "▲" without its legend line, factor syntax (``key=value``)
  shown to a reader.
- a verdict's shading hard to tell from the baseline column's, or text hard to read on either.
- a date, a range of numbers, a number and its unit, or "n = 5" broken across two lines; a command wrapped
  between an option and its value, or a code block's line wrapped inside a word; a Japanese heading or
  navigation link broken inside a katakana word.

Each check is a JavaScript function returning the problems it found (strings naming the page's element);
a test per check runs it over every page and expects none, and a test breaks a page on purpose to show that
each check fails when it should. A failing check keeps a screenshot of the page in the test's tmp_path."""

from pathlib import Path

import pytest

from site_helpers import served_in_chromium

pytestmark = pytest.mark.browser

# every kind of page, and the pages the reader's report named (table 2.1, table 6.1, FY2013 表 2.4,
# FY2017 表 8.10, the parallel-query and profile charts)
PAGES = {
    "cover": "/{lang}/reports/example/",
    "chapter": "/{lang}/reports/example/scaleup/",
    "chapter-syscalls": "/{lang}/reports/example/syscalls/",
    "chapter-disk": "/{lang}/reports/example/disk/",
    "chapter-parallel": "/{lang}/reports/example/parallel/",
    "chapter-profile": "/{lang}/reports/example/profile/",
    "chapter-replication": "/{lang}/reports/example/replication/",
    "chapter-client-server": "/{lang}/reports/example/client-server/",
    "chapter-walsync": "/{lang}/reports/example/walsync/",
    "chapter-softirq": "/{lang}/reports/example/softirq/",
    "chapter-versions": "/{lang}/reports/example/versions/",
    "methods": "/{lang}/reports/example/methods/",
    "sources": "/{lang}/reports/example/sources/",
    "appendix": "/{lang}/reports/example/appendix/",
    "compare": "/{lang}/reports/example/compare-checksums/",
    "run": None,  # the first run page of the example (found in the built site)
    "trends": "/{lang}/trends/",
    "past-fy2013": "/{lang}/reports/past-fy2013/scaleup/",
    "past-fy2017": "/{lang}/reports/past-fy2017/replication/",
    "past-fy2017-fdw": "/{lang}/reports/past-fy2017/fdw/",
}
LANGS = ("ja", "en")
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}

_BOX = r"""
const rect = el => el.getBoundingClientRect();
const name = el => {
  const f = el.closest('figure[id]');
  const what = el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  return (f ? '#' + f.id + ' ' : '') + what;
};
const charts = () => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd._fullLayout);
// two boxes share more than px pixels each way
const overlaps = (a, b, px) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > px &&
  Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > px;
"""

# 1. raw markup in hovers: a trace's texts carry no escaped tag, and the hover label plotly draws for the
# first point of every trace shows no tag nor entity
HOVER = "async () => {" + _BOX + r"""
  const out = [];
  const escaped = /&lt;\/?[a-z]+/i;
  const shown = /<\/?(br|b|i|em|sup|sub|span)\b[^>]*>|&(lt|gt|amp|quot|#\d+);/i;
  for (const gd of charts()) {
    const fig = gd.getAttribute('data-figure');
    gd.data.forEach((t, ti) => {
      for (const k of ['hovertemplate', 'hovertext', 'text']) {
        const v = t[k];
        const hit = (Array.isArray(v) ? v : [v]).find(s => typeof s === 'string' && escaped.test(s));
        if (hit) out.push(`${fig}: trace ${ti} ${k} holds escaped markup: ${hit.slice(0, 60)}`);
      }
    });
    for (let ti = 0; ti < gd._fullData.length; ti++) {
      const t = gd._fullData[ti];
      if (t.visible !== true || t.hoverinfo === 'skip' || t.hoverinfo === 'none' || !t.xaxis) continue;
      if (!((t.x && t.x.length) || (t.y && t.y.length))) continue;
      try { Plotly.Fx.hover(gd, [{curveNumber: ti, pointNumber: 0}], [t.xaxis + t.yaxis]); } catch (e) { continue; }
      const txt = [...gd.querySelectorAll('.hoverlayer text')].map(e => e.textContent).join(' | ');
      if (shown.test(txt)) out.push(`${fig}: trace ${ti} hover shows markup: ${txt.slice(0, 80)}`);
      Plotly.Fx.unhover(gd);
      await new Promise(r => setTimeout(r, 60));  // plotly throttles hovers
    }
  }
  return out;
}"""

# 2. nothing wider than its box without the cue: a table, figure, code block or chart that runs past an
# ancestor's edge must do so inside a scroll box that carries the cue; and no page is wider than the window
OVERFLOW = "() => {" + _BOX + r"""
  const out = [];
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1)
    out.push(`page is ${document.documentElement.scrollWidth} px wide in a ${vw} px window`);
  for (const el of document.querySelectorAll('main table, main figure, main pre, main pre > code, main .chart, main img, main dl, main .table-scroll')) {
    if (!el.getClientRects().length) continue;
    const r = rect(el);
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const cs = getComputedStyle(a);
      const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
      const ar = rect(a);
      if (scrolls) {
        if (a.scrollWidth > a.clientWidth + 1 && !a.hasAttribute('data-cue'))
          out.push(`${name(el)} scrolls inside ${name(a)}, which has no cue`);
        break;
      }
      if (r.right > ar.right + 1 || r.left < ar.left - 1) {
        out.push(`${name(el)} (${Math.round(r.left)}–${Math.round(r.right)}) runs past ${name(a)} (${Math.round(ar.left)}–${Math.round(ar.right)})`);
        break;
      }
    }
  }
  return [...new Set(out)];
}"""

# 3. on a phone, a table's first column and its verdict column in view together: without scrolling, the
# verdict cells lie inside the scroll box; scrolled to the end, the first column is still there
STICKY = "async () => {" + _BOX + r"""
  const out = [];
  const pinned = c => getComputedStyle(c).position === 'sticky';
  const hidden = c => /rgba\(.*,\s*0\)$|transparent/.test(getComputedStyle(c).color);
  // the box of a cell's text as laid out (moved into view or not), null for an empty cell
  const textBox = c => { const r = document.createRange(); r.selectNodeContents(c);
                         const rs = [...r.getClientRects()].filter(x => x.width > 0);
                         return rs.length ? {left: Math.min(...rs.map(x => x.left)), right: Math.max(...rs.map(x => x.right))} : null; };
  // a cell's text seen in part from under a kept column ("539" of 5397.5), or, at rest, a cell that reads empty
  // (its text hidden) though the part of it in view could hold its text
  const partlyCovered = (table, atRest) => {
    for (const tr of table.querySelectorAll('tbody tr')) {
      const cells = [...tr.children];
      const kept = cells.filter(pinned);
      const edges = kept.map(c => cells.indexOf(c) === 0 ? rect(c).right : rect(c).left);
      const lo = Math.max(rect(table.parentElement).left, ...kept.filter(c => cells.indexOf(c) === 0).map(c => rect(c).right));
      const hi = Math.min(rect(table.parentElement).right, ...kept.filter(c => cells.indexOf(c) > 0).map(c => rect(c).left));
      for (const c of cells) {
        if (pinned(c) || !c.textContent.trim()) continue;
        const t = textBox(c);
        if (hidden(c)) {
          const room = Math.min(rect(c).right, hi) - Math.max(rect(c).left, lo);
          if (atRest && t && room >= t.right - t.left + 4) return [c, 'reads empty though its text fits the part in view'];
          continue;
        }
        if (t && edges.some(e => t.left < e - 2 && t.right > e + 2)) return [c, 'shows in part from under a kept column'];
      }
    }
    return null;
  };
  for (const box of document.querySelectorAll('main .table-scroll')) {
    const table = box.querySelector('table');
    if (!table || !box.getClientRects().length || box.scrollWidth <= box.clientWidth + 1) continue;
    const b = rect(box);
    const verdicts = [...table.querySelectorAll('td.compare')];
    // the first row with verdicts shows at least one of them (a table may compare twice: one stays in view)
    const row = verdicts.length ? verdicts[0].parentElement : null;
    const cells = row ? [...row.querySelectorAll('td.compare')] : [];
    if (cells.length && cells.every(c => rect(c).right > b.right + 1 || rect(c).left < b.left - 1))
      out.push(`${name(table)}: verdict cell "${cells[0].textContent.trim().slice(0, 20)}" needs a sideways scroll`);
    // no cell shows part of its text from under a kept column, at rest and scrolled; none reads empty at rest
    const keep = box.scrollLeft;
    const frames = () => new Promise(r => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(r)), 150));
    for (const at of [keep, Math.round((box.scrollWidth - box.clientWidth) / 2)]) {
      box.scrollLeft = at;
      await frames();
      const bad = partlyCovered(table, at === keep);
      if (bad) { out.push(`${name(table)}: "${bad[0].textContent.trim().slice(0, 20)}" ${bad[1]}`); break; }
    }
    box.scrollLeft = box.scrollWidth;
    await new Promise(r => requestAnimationFrame(r));
    // a table whose rows are labelled (a header cell first) keeps its labels in view
    const first = table.querySelector('tbody tr:not(.row-group) > th:first-child');
    if (first && rect(first).left < rect(box).left - 1) out.push(`${name(table)}: first column scrolls out of view`);
    box.scrollLeft = keep;
  }
  return out;
}"""

# 4. each chart's title attached to its own chart: at most half as far from it as from a neighbouring chart
# (a title about as far from both reads as the next chart's)
TITLES = "() => {" + _BOX + r"""
  const out = [];
  const drawn = gd => {
    const rs = [...gd.querySelectorAll('.cartesianlayer, .legend, .infolayer .g-xtitle, .xtick text')].map(rect).filter(r => r.height > 0);
    if (!rs.length) return null;
    return {top: Math.min(...rs.map(r => r.top)), bottom: Math.max(...rs.map(r => r.bottom))};
  };
  // what a figure shows above its title: the chart as drawn and what the figure adds under it (a flame
  // graph's search and top-N table)
  const body = (gd, cap) => {
    const d = drawn(gd);
    if (!d || !cap) return d;
    for (const el of cap.parentElement.children) {
      if (el === cap) break;
      if (el.tagName === 'SCRIPT' || el.contains(gd)) continue;
      const r = rect(el);
      if (r.height > 0) { d.top = Math.min(d.top, r.top); d.bottom = Math.max(d.bottom, r.bottom); }
    }
    return d;
  };
  const boxes = charts().map(gd => { const cap = gd.closest('figure') && gd.closest('figure').querySelector(':scope > figcaption');
                                     return {gd, d: body(gd, cap), cap}; })
                        .filter(x => x.d && x.cap);
  for (const x of boxes) {
    const c = rect(x.cap);
    const own = c.top >= x.d.bottom ? c.top - x.d.bottom : x.d.top - c.bottom;
    for (const y of boxes) {
      if (y === x) continue;
      const other = c.top >= y.d.bottom ? c.top - y.d.bottom : (y.d.top >= c.bottom ? y.d.top - c.bottom : Infinity);
      if (other <= 2 * own) out.push(`${x.gd.getAttribute('data-figure')}: its title is ${Math.round(own)} px from it, ${Math.round(other)} px from ${y.gd.getAttribute('data-figure')}`);
    }
  }
  return out;
}"""

# 5. a chart's plot area at least 60 % of a phone's width, and its labels inside the figure
PLOTS = "() => {" + _BOX + r"""
  const out = [];
  const vw = document.documentElement.clientWidth;
  for (const gd of charts()) {
    const fig = gd.getAttribute('data-figure');
    const g = rect(gd);
    const plots = [...gd.querySelectorAll('.cartesianlayer .subplot .bg, .cartesianlayer .bglayer rect.bg')].map(rect);
    const widest = Math.max(0, ...plots.map(r => r.width), gd._fullLayout._size.w);
    if (vw <= 600 && widest < 0.6 * vw && !gd._fullLayout.grid && Object.keys(gd._fullLayout._plots || {}).length <= 1)
      out.push(`${fig}: plot area ${Math.round(widest)} px of a ${vw} px window`);
    for (const t of gd.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .g-y2title text, .legend, text.bartext, .annotation-text-g text')) {
      const r = rect(t);
      if (!r.width) continue;
      if (r.left < g.left - 1 || r.right > g.right + 1) { out.push(`${fig}: label "${t.textContent.slice(0, 30)}" cut at the figure's edge`); break; }
    }
    // every marker whole inside its plot area (a point of the last year sat half outside on a phone)
    const areas = Object.values(gd._fullLayout._plots || {}).map(sp => ({left: g.left + sp.xaxis._offset,
      right: g.left + sp.xaxis._offset + sp.xaxis._length, top: g.top + sp.yaxis._offset,
      bottom: g.top + sp.yaxis._offset + sp.yaxis._length}));
    for (const pt of gd.querySelectorAll('.scatterlayer path.point')) {
      const r = rect(pt);
      if (!r.width || areas.some(a => r.left >= a.left - 1 && r.right <= a.right + 1 && r.top >= a.top - 1 && r.bottom <= a.bottom + 1)) continue;
      out.push(`${fig}: a marker at (${Math.round(r.left)}, ${Math.round(r.top)}) outside the plot area`);
      break;
    }
    // the x axis title clear of its tick labels and of the legend (a legend wrapping at the figure's foot
    // pushed the title onto the ticks)
    const xt = gd.querySelector('.g-xtitle text');
    if (xt && rect(xt).width) {
      const a = rect(xt);
      const hit = [...gd.querySelectorAll('.xtick text, .legend .traces')].map(e => [e, rect(e)]).find(([, b]) => b.width &&
        overlaps(a, b, 2));
      if (hit) out.push(`${fig}: x axis title "${xt.textContent.slice(0, 24)}" overlaps "${hit[0].textContent.slice(0, 24)}"`);
    }
    // a value label is not crossed by a whisker (a bar's or a point's runs, min to max)
    const values = [...gd.querySelectorAll('text.bartext, .textpoint text')].map(t => [t, rect(t)]).filter(([, r]) => r.width);
    const whiskers = [...gd.querySelectorAll('.errorbar path')].map(rect).filter(r => r.height > 1);
    crossed: for (const [t, a] of values) for (const b of whiskers) {
      if (overlaps(a, b, 1)) {
        out.push(`${fig}: label "${t.textContent.slice(0, 24)}" crossed by an error bar`);
        break crossed;
      }
    }
    // labels drawn in the plot (a row's name above its bar, a bar's text) never run into one another
    const labels = [...gd.querySelectorAll('.annotation-text-g text, text.bartext')].map(t => [t, rect(t)]).filter(([, r]) => r.width);
    overlap: for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i][1], b = labels[j][1];
      if (overlaps(a, b, 2)) {
        out.push(`${fig}: labels "${labels[i][0].textContent.slice(0, 24)}" and "${labels[j][0].textContent.slice(0, 24)}" overlap`);
        break overlap;
      }
    }
  }
  return out;
}"""

# 6. words: no English unit word in a Japanese header, "▲" explained where it is used, no key=value syntax
WORDS = "() => {" + _BOX + r"""
  const out = [];
  const ja = document.documentElement.lang.startsWith('ja');
  if (ja) for (const th of document.querySelectorAll('main thead th')) {
    if (th.closest('.prov-table')) continue;  // a run's identity: its factor keys ("繰り返し (rep)") are the vocabulary
    const m = th.textContent.match(/\((?:[a-z]{3,}|tps)\)/);
    if (m) out.push(`${name(th)}: English unit ${m[0]} in "${th.textContent.trim().slice(0, 40)}"`);
  }
  const text = el => { const c = el.cloneNode(true); c.querySelectorAll('.sign-legend').forEach(x => x.remove()); return c.textContent; };
  const main = document.querySelector('main');
  if (main && text(main).includes('▲')) {
    for (const f of main.querySelectorAll('figure')) {
      if (text(f).includes('▲') && !f.querySelector('.sign-legend')) out.push(`${name(f)}: uses ▲ without its legend line`);
    }
  }
  // factor syntax: a block's text as a reader reads it (a command or a file name in <code> is no factor
  // syntax there, but a column headed by one is); "n = 5", "p = 0.01" and command options are not factors;
  // a factor named in words is still syntax when "=" joins it to its value ("Study = scaleup")
  const syntax = /(?<![-\w.])[a-z][a-z0-9_]+=[a-z0-9]|(?:^|[,:;(、：—]\s*)(?:[a-z][a-z0-9_]+|[A-Z][a-z]+(?: [a-z]+)*|[\u3040-\u30ff\u4e00-\u9fff]+) = [\w\u3040-\u30ff\u4e00-\u9fff]/u;
  for (const el of (main || document.body).querySelectorAll('p, li, th, td, dt, dd, figcaption, h1, h2, h3, summary')) {
    if (el.closest('pre, script, .commands, .compare-command, details.run-files, details.provenance') || !el.getClientRects().length) continue;
    const c = el.cloneNode(true);
    if (el.tagName !== 'TH') c.querySelectorAll('code').forEach(x => x.remove());
    c.querySelectorAll('p, li, ul, ol, table, details').forEach(x => x.remove());
    const m = c.textContent.match(syntax);
    if (m) out.push(`${name(el)}: factor syntax "${m[0]}…" in "${c.textContent.trim().slice(0, 60)}"`);
  }
  // English counts: one is singular ("1 runs" is a template given a float)
  if (!ja) { const m = document.body.textContent.match(/(?<![\d.,])1 (runs|files|clients|samples|hosts|machines|tables|figures)\b/);
    if (m) out.push(`"${m[0]}": a count of one in the plural`); }
  return [...new Set(out)];
}"""

# 7. ticks at round values: a numeric axis plotly ticks by itself steps by 1, 2, 2.5 or 5 times a power of ten
# (a second axis synced to the first's grid, or a step like 0.45, reads as noise)
TICKS = "() => {" + _BOX + r"""
  const out = [];
  for (const gd of charts()) {
    for (const [k, ax] of Object.entries(gd._fullLayout)) {
      if (!/^[xy]axis\d*$/.test(k) || !ax || ax.type !== 'linear' || ax.tickmode === 'array' || !ax.visible) continue;
      const v = (ax._vals || []).map(t => t.x);
      if (v.length < 2) continue;
      const step = Math.abs(v[1] - v[0]);
      const m = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
      if (![1, 2, 2.5, 5, 10].some(r => Math.abs(m - r) < 1e-6 * r))
        out.push(`${gd.getAttribute('data-figure')}: ${k} ticks step by ${+step.toPrecision(4)} (${v.slice(0, 3).map(x => +x.toPrecision(4)).join(' / ')} …)`);
    }
  }
  return out;
}"""

# 8. a verdict's shading seen against the baseline column's: the two backgrounds, as the browser computed
# them, apart by a contrast ratio of 1.5 at least (WCAG's relative luminance), and every piece of text in
# either kind of cell (the value, the verdict's symbol, a range under it) at 4.5:1 on its background
CONTRAST = "() => {" + _BOX + r"""
  const out = [];
  const rgba = s => { const m = s.match(/[\d.]+/g) || []; return m.map(Number).concat([1]).slice(0, 4); };
  const lin = c => { c /= 255; return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  const lum = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const bg = el => { for (let a = el; a; a = a.parentElement) { const c = rgba(getComputedStyle(a).backgroundColor);
                                                              if (c[3] > 0) return c; } return [255, 255, 255, 1]; };
  const hex = c => '#' + c.slice(0, 3).map(x => Math.round(x).toString(16).padStart(2, '0')).join('');
  for (const table of document.querySelectorAll('main table')) {
    const verdicts = [...table.querySelectorAll('td.better, td.worse')].filter(c => c.getClientRects().length);
    const bases = [...table.querySelectorAll('td.baseline, th.baseline')].filter(c => c.getClientRects().length);
    const base = bases.find(c => !c.matches('.better, .worse'));
    for (const v of verdicts) {
      const kind = v.matches('.better') ? 'better' : 'worse';
      if (base && ratio(bg(v), bg(base)) < 1.5)
        { out.push(`${name(table)}: "${kind}" shading ${hex(bg(v))} against the baseline's ${hex(bg(base))}: ${ratio(bg(v), bg(base)).toFixed(2)}:1`); break; }
    }
    for (const cell of [...verdicts.slice(0, 20), ...bases.slice(0, 20)]) {
      const back = bg(cell);
      for (const el of [cell, ...cell.querySelectorAll('*')]) {
        if (!el.getClientRects().length || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        const r = ratio(rgba(getComputedStyle(el).color), back);
        if (r < 4.5) { out.push(`${name(table)}: "${el.textContent.trim().slice(0, 20)}" at ${r.toFixed(2)}:1 on ${hex(back)}`); break; }
      }
    }
  }
  return [...new Set(out)];
}"""

# 9. nothing a reader reads as one token broken across two lines: a date, a range of numbers
# ("10,623.7–12,126.3"), a number and its unit or percent sign, "n = 5" (the text as laid out: a range over
# the match has its boxes on one line)
BREAKS = "() => {" + _BOX + r"""
  const out = [];
  const kinds = /\d{4}-\d{2}-\d{2}|\d[\d,.]*–\d[\d,.]*|[-+]?\d[\d,.]*\s?%|\bn = \d+|\d[\d,.]*\s(?:ms|s|GiB|MiB|KiB|GB|MB|TPS|tps)(?![\w])/g;
  const root = document.querySelector('main') || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('pre, script, style, svg, .js-plotly-plot') || !el.getClientRects().length) continue;
    for (const m of n.textContent.matchAll(kinds)) {
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) out.push(`${name(el)}: "${m[0]}" broken across lines`);
    }
  }
  // a word of the text ("Transactions") never broken inside (a column squeezed to "Transaction⏎s"); code, a
  // file name or a function name (in code, a flame graph's frames) may break where it must
  const word = /[A-Za-z]{3,}/g;
  const walker2 = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker2.nextNode(); n; n = walker2.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('pre, code, script, style, svg, .js-plotly-plot, .flame-fn, .run-id') || !el.getClientRects().length) continue;
    for (const m of n.textContent.matchAll(word)) {
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) { out.push(`${name(el)}: the word "${m[0]}" broken inside`); break; }
    }
  }
  // a Japanese heading, caption or navigation link (the report's contents beside the page) never broken inside
  // a katakana word ("ストリーミングレプリケーショ⏎ン")
  const kana = /[\u30A1-\u30FA\u30FC]{2,}/g;
  for (const h of [...root.querySelectorAll('h1, h2, h3, caption, figcaption'), ...document.querySelectorAll('nav a')]) {
    if (!h.closest(':lang(ja)') || !h.getClientRects().length) continue;
    const w = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      for (const m of n.textContent.matchAll(kana)) {
        const r = document.createRange();
        r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) out.push(`${name(h)}: the word "${m[0]}" broken inside`);
      }
    }
  }
  // code as laid out: a line of a command never wraps between an option and its value ("-f⏎scripts/read.sql"),
  // nor a code block's line inside a word; it breaks at the shell's " \\" or scrolls
  const lineTop = (node, i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                                 const b = [...r.getClientRects()].find(x => x.width > 0); return b ? Math.round(b.top) : null; };
  for (const code of root.querySelectorAll('pre, code')) {
    if ((code.tagName === 'CODE' && code.closest('pre')) || !code.getClientRects().length) continue;
    const w = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const s = n.textContent;
      let top = null;
      for (let i = 0; i < s.length; i++) {
        if (s[i] === '\n') { top = null; continue; }
        const t = lineTop(n, i);
        if (t === null) continue;
        if (top !== null && t > top + 2) {  // s[i] starts a visual line its source line did not start
          const line = s.slice(s.lastIndexOf('\n', i - 1) + 1, i), rest = s.slice(i).split('\n')[0];
          const prev = line.trimEnd().split(/\s+/).pop() || '', next = rest.trimStart().split(/\s+/)[0] || '';
          const atSpace = /\s$/.test(line) || /^\s/.test(rest);
          if (atSpace && /^--?[A-Za-z][\w-]*$/.test(prev) && next && !next.startsWith('-'))
            out.push(`${name(code)}: "${prev}" parted from its value "${next.slice(0, 30)}"`);
          else if (!atSpace && code.tagName === 'PRE')
            out.push(`${name(code)}: "${(line.split(/\s+/).pop() + rest.split(/\s+/)[0]).slice(0, 40)}" broken inside`);
        }
        top = t;
      }
    }
  }
  return [...new Set(out)];
}"""

CHECKS = {"hover": HOVER, "overflow": OVERFLOW, "sticky": STICKY, "titles": TITLES, "plots": PLOTS, "words": WORDS, "ticks": TICKS,
          "contrast": CONTRAST, "breaks": BREAKS}


def _run_page(public: Path) -> str:
    """The first run page of the example with its charts over time (the TITLES check needs several)."""
    pages = sorted((public / "ja/reports/example/runs").glob("*.html"))
    first = next(p for p in pages if 'id="run-chart-cpu"' in p.read_text(encoding="utf-8"))
    return "/{lang}/reports/example/runs/" + first.name


@pytest.fixture(scope="module")
def browser(example_site):
    _, public = example_site
    with served_in_chromium(public) as (b, base):
        yield b, base, public


def open_page(b, base: str, path: str, size: str):
    w, h = SIZES[size]
    p = b.new_page(viewport={"width": w, "height": h})
    p.goto(base + path)
    p.wait_for_load_state("load")
    p.wait_for_function("[...document.querySelectorAll('div.chart[data-figure]')].every(d => d.getAttribute('data-rendered'))",
                        timeout=30000)
    return p


def check_all(b, base: str, public: Path, keep: Path | None = None) -> dict[str, list[str]]:
    """Every check over every page × language × size: {check: ["page lang size: problem", …]}."""
    found: dict[str, list[str]] = {k: [] for k in CHECKS}
    for kind, path in PAGES.items():
        path = path or _run_page(public)
        for lang in LANGS:
            for size in SIZES:
                p = open_page(b, base, path.format(lang=lang), size)
                bad = False
                for check, js in CHECKS.items():
                    got = p.evaluate(js)
                    found[check] += [f"{kind} {lang} {size}: {x}" for x in got]
                    bad = bad or bool(got)
                if bad and keep is not None:
                    p.screenshot(path=str(keep / f"{kind}-{lang}-{size}.png"), full_page=True)
                p.close()
    return found


@pytest.fixture(scope="module")
def findings(browser, tmp_path_factory):
    b, base, public = browser
    return check_all(b, base, public, tmp_path_factory.mktemp("reader-screenshots"))


@pytest.mark.parametrize("check", list(CHECKS))
def test_reader_check_finds_nothing(findings, check):
    assert findings[check] == [], "\n".join(findings[check][:30])


# a page broken on purpose: each check must catch its kind of defect
BREAK = {
    "hover": """() => { const gd = document.querySelector('.js-plotly-plot');
        return Plotly.restyle(gd, {hovertext: [['a&lt;br&gt;b']], hoverinfo: 'text', hovertemplate: null}, [0]); }""",
    "overflow": """() => { const a = document.querySelector('main article, main');
        const t = document.createElement('table'); t.innerHTML = '<tr>' + '<td>wide&nbsp;cell&nbsp;'.repeat(40) + '</tr>';
        a.appendChild(t); }""",
    "sticky": """() => { const t = document.querySelector('main .table-scroll table');
        const rows = t.querySelectorAll('tr');
        rows.forEach(r => { for (let i = 0; i < 12; i++) { const c = document.createElement(r.parentElement.tagName === 'THEAD' ? 'th' : 'td');
            c.textContent = 'pad pad pad'; c.style.whiteSpace = 'nowrap'; r.appendChild(c); } const v = document.createElement('td'); v.className = 'num compare'; v.textContent = '+1 %'; r.appendChild(v); });
        t.querySelectorAll('th, td').forEach(c => { c.style.position = 'static'; }); }""",
    "sticky-covered": """() => { const s = document.createElement('style');
        s.textContent = '.table-scroll.is-wide .cell-text { transform: none !important; }';
        document.head.appendChild(s); }""",
    "sticky-empty": """() => { document.querySelectorAll('main .table-scroll.is-wide td.value').forEach(c => c.classList.add('covered')); }""",
    "titles": """() => { document.querySelectorAll('main figure.kansoku-figure').forEach(f => {
        const c = f.querySelector(':scope > figcaption'); if (c) c.style.marginTop = '300px'; }); }""",
    "plots": """() => { const gd = document.querySelector('.js-plotly-plot');
        return Plotly.relayout(gd, {'margin.l': 280}); }""",
    "plots-overlap": """() => { const gd = document.querySelector('.js-plotly-plot');
        return Plotly.relayout(gd, {annotations: [{x: 0.5, y: 0.5, xref: 'paper', yref: 'paper', text: 'one label', showarrow: false},
                                                  {x: 0.5, y: 0.5, xref: 'paper', yref: 'paper', text: 'another label', showarrow: false}]}); }""",
    "plots-marker": """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.querySelector('.scatterlayer path.point'));
        return Plotly.relayout(gd, {'xaxis.autorange': false, 'yaxis.autorange': false}).then(() => Plotly.restyle(gd, {'marker.size': 60})); }""",
    "plots-whisker": """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.querySelector('.errorbar path'));
        const t = gd.data.findIndex(d => d.error_y && d.error_y.array);
        return Plotly.restyle(gd, {mode: 'lines+markers+text', textposition: 'middle center',
                                   text: [gd.data[t].y.map(y => String(Math.round(y)))]}, [t]); }""",
    "plots-axis-title": """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.querySelector('.g-xtitle text'));
        return Plotly.relayout(gd, {'xaxis.title.standoff': 0, 'xaxis.automargin': false, 'margin.b': 20}); }""",
    "words": """() => { const th = document.querySelector('main thead th'); th.textContent += ' (calls)';
        document.querySelector('main p').append(' config=checksums-off'); }""",
    "words-labelled": """() => { const p = document.createElement('p');
        p.textContent = '共通の条件: キャンペーン = example-2026-11, 調査 = scaleup'; document.querySelector('main p').after(p); }""",
    "contrast": """() => { document.querySelectorAll('main td.better').forEach(c => { c.style.background = '#dbe9f8'; }); }""",
    "contrast-text": """() => { document.querySelectorAll('main td.worse, main td.better').forEach(c => { c.style.color = '#8a8a8a'; }); }""",
    "breaks": """() => { const p = document.createElement('p'); p.style.width = '3.5em'; p.style.overflowWrap = 'anywhere';
        p.textContent = 'on 2026-11-23 it was 13.53 %'; document.querySelector('main p').after(p); }""",
    "breaks-range": """() => { const p = document.createElement('p'); p.style.width = '4em';
        p.textContent = 'from 10,623.7–12,126.3'; document.querySelector('main p').after(p); }""",
    "breaks-word": """() => { const p = document.createElement('p'); p.style.width = '3em'; p.style.overflowWrap = 'anywhere';
        p.textContent = 'Transactions processed'; document.querySelector('main p').after(p); }""",
    "breaks-kana": """() => { const h = document.createElement('h2'); h.style.width = '9em'; h.style.wordBreak = 'normal';
        h.textContent = '実行 ストリーミングレプリケーション、同期 1'; document.querySelector('main p').after(h); }""",
    "breaks-kana-nav": """() => { const a = document.querySelector('nav.report-toc a'); a.style.width = '9em'; a.style.wordBreak = 'normal';
        a.textContent = '6. ストリーミングレプリケーション'; }""",
    "breaks-command": """() => { document.querySelectorAll('main pre.command').forEach(p => {
        p.style.whiteSpace = 'pre-wrap'; p.style.overflowWrap = 'normal'; p.style.width = '17ch'; }); }""",
    "ticks": """() => { const gd = document.querySelector('.js-plotly-plot');
        return Plotly.relayout(gd, {'yaxis.tickmode': 'linear', 'yaxis.tick0': 0, 'yaxis.dtick': 0.45 * Math.pow(10, Math.round(Math.log10(gd._fullLayout.yaxis.range[1] || 1)))}); }""",
}


@pytest.mark.parametrize("breaking", list(BREAK))
def test_reader_check_fails_on_a_broken_page(browser, breaking):
    b, base, _ = browser
    check = breaking.split("-")[0]
    p = open_page(b, base, "/ja/reports/example/scaleup/", "phone")
    try:
        assert p.evaluate(CHECKS[check]) == []
        p.evaluate(BREAK[breaking])
        p.wait_for_timeout(200)
        assert p.evaluate(CHECKS[check]) != []
    finally:
        p.close()


def test_words_check_catches_a_count_of_one_in_the_plural(browser):
    b, base, _ = browser
    p = open_page(b, base, "/en/reports/example/scaleup/", "desktop")
    try:
        assert p.evaluate(CHECKS["words"]) == []
        p.evaluate("() => document.querySelector('main p').append(' (1 runs)')")
        assert any("plural" in x for x in p.evaluate(CHECKS["words"]))
    finally:
        p.close()
