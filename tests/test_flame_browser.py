"""A reader exploring the example's flame graphs in a real Chromium (static/js/kansoku.js): a click on a frame
zooms every panel into it and a click on the root zooms back; typing a function's name in the search box
colours its frames and says which share of the samples they hold; the folded-stack download is served."""

import pytest

from site_helpers import served_in_chromium

pytestmark = pytest.mark.browser

SEARCH_COLOR = "rgb(230,0,230)"
FIG = "#figure-profile-flame"
GD = FIG + " .js-plotly-plot"


@pytest.fixture(scope="module")
def browser(example_site):
    _, public = example_site
    with served_in_chromium(public) as (b, base):
        yield b, base


def _open(b, base, path, width=1280):
    p = b.new_page(viewport={"width": width, "height": 900})
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.goto(base + path)
    p.wait_for_function("[...document.querySelectorAll('div.chart[data-figure]')].every(d => d.getAttribute('data-rendered'))",
                        timeout=30000)
    return p, errors


def _click(p, pt: dict) -> None:
    """A reader's click: the pointer rests on the frame first (plotly clicks the point its last hover found)."""
    p.mouse.move(pt["x"], pt["y"])
    p.wait_for_timeout(400)
    p.mouse.click(pt["x"], pt["y"])


def _frame_point(p, label: str, trace: int = 0) -> dict:
    """Scroll the frame into view and return where it is on the screen."""
    js = """([label, trace]) => { const gd = document.querySelector('%s');
      const t = gd.data[trace]; const k = t.customdata.findIndex(c => c[0] === label);
      const xa = gd._fullLayout[(t.xaxis || 'x').replace('x', 'xaxis')], ya = gd._fullLayout[(t.yaxis || 'y').replace('y', 'yaxis')];
      const at = () => { const r = gd.getBoundingClientRect();
        return {k, x: r.left + xa._offset + xa.l2p(t.base[k] + t.x[k] / 2), y: r.top + ya._offset + ya.l2p(t.y[k])}; };
      window.scrollBy(0, at().y - 400); return at(); }""" % GD
    return p.evaluate(js, [label, trace])


@pytest.mark.parametrize("width", [1280, 390])
def test_a_click_zooms_into_a_frame_and_the_root_zooms_back(browser, width):
    b, base = browser
    p, errors = _open(b, base, "/en/reports/example/profile/", width)
    try:
        whole = p.evaluate(f"() => document.querySelector('{GD}')._fullLayout.xaxis.range")
        pt = _frame_point(p, "PortalRun")
        _click(p, pt)
        p.wait_for_function(f"document.querySelector('{GD}').getAttribute('data-zoomed') === 'true'", timeout=20000)
        got = p.evaluate("""() => { const gd = document.querySelector('%s'); const t = gd.data[0];
            const k = t.customdata.findIndex(c => c[0] === 'PortalRun');
            const shown = t.y.filter(v => v !== null && v !== undefined).length;
            return {range: gd._fullLayout.xaxis.range, base: t.base[k], width: t.x[k], shown, all: t.y.length,
                    range2: gd._fullLayout.xaxis2.range}; }""" % GD)
        # the panel shows PortalRun's width, its callers and callees: the frames beside it are gone
        assert got["range"] == pytest.approx([got["base"], got["base"] + got["width"]], abs=1e-6)
        assert got["range"][1] - got["range"][0] < 0.5 * (whole[1] - whole[0])
        assert 0 < got["shown"] < got["all"]
        assert got["range2"][1] - got["range2"][0] < 0.5 * (whole[1] - whole[0])  # the other condition's PortalRun too
        assert p.is_visible(FIG + " button.flame-reset")
        root = _frame_point(p, "all samples")
        _click(p, root)
        p.wait_for_function(f"document.querySelector('{GD}').getAttribute('data-zoomed') === 'false'", timeout=20000)
        assert p.evaluate(f"() => document.querySelector('{GD}')._fullLayout.xaxis.range") == pytest.approx(whole)
        assert errors == []
    finally:
        p.close()


def test_the_search_highlights_the_matching_frames_and_says_their_share(browser):
    b, base = browser
    p, errors = _open(b, base, "/ja/reports/example/profile/")
    try:
        p.fill(FIG + " input.flame-search", "ExecScan")
        p.wait_for_function(f"document.querySelector('{GD}').getAttribute('data-matched') > '0'", timeout=20000)
        got = p.evaluate("""() => { const gd = document.querySelector('%s');
            return gd.data.filter(t => t.meta && t.meta.flame).map(t => t.customdata.map((c, j) =>
              [c[0], Array.isArray(t.marker.color) ? t.marker.color[j] : t.marker.color, +c[1]])); }""" % GD)
        for panel in got:
            hit = [f for f in panel if f[1] == SEARCH_COLOR]
            assert hit and all(f[0] == "ExecScan" for f in hit)
        status = p.text_content(FIG + " .flame-matched")
        share = sum(f[2] for f in got[0] if f[0] == "ExecScan")  # ExecScan does not call itself here
        assert "一致" in status and f"{share:.1f} %" in status
        p.fill(FIG + " input.flame-search", "")
        p.wait_for_function(f"!document.querySelector('{GD}').getAttribute('data-matched')", timeout=20000)
        assert errors == []
    finally:
        p.close()


def test_the_folded_download_and_the_differential_graph(browser):
    b, base = browser
    p, errors = _open(b, base, "/en/reports/example/versions/")
    try:
        links = p.eval_on_selector_all("#figure-versions-read-flame-diff a.csv", "as => as.map(a => a.href)")
        assert len(links) == 1 and links[0].endswith(".folded")
        text = p.evaluate("url => fetch(url).then(r => r.text())", links[0])
        lines = text.splitlines()
        assert lines and all(len(line.rsplit(" ", 2)) == 3 and line.rsplit(" ", 2)[1].isdigit() for line in lines)
        colors = p.evaluate("""() => document.querySelector('#figure-versions-read-flame-diff .js-plotly-plot').data[0].marker.color""")
        assert any(c.startswith("rgb(255,") and c != "rgb(255,255,255)" for c in colors)   # grew: red
        assert any(c.endswith(",255)") and not c.startswith("rgb(255,") for c in colors)  # shrank: blue
        assert errors == []
    finally:
        p.close()
