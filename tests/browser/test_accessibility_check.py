"""The accessibility check the browser tests run on every page names what it finds: a page
built with one of each fault, and a page without any."""

from tests.browser.conftest import ACCESSIBILITY, OVERFLOW, PHONE

FAULTY = """<!doctype html><html lang="en"><body>
<h1>One</h1><h1>Two</h1><h3>Skipped a level</h3>
<input id="bare" name="bare">
<label for="elsewhere">Points nowhere</label><select id="menu" name="menu"></select>
<textarea name="notes"></textarea>
<img src="/chart.png"><svg role="img"></svg>
<button></button><button><span></span></button>
<p id="twice"></p><p id="twice"></p>
<div style="width: 600px">wide</div>
</body></html>"""

FINE = """<!doctype html><html lang="en"><body>
<h1>One</h1><h2>Two</h2><h3>Three</h3><h2>Back up</h2>
<label for="a">A</label><input id="a"> <label>B <input></label>
<input aria-label="C"> <span id="d-name">D</span><select aria-labelledby="d-name"></select>
<input type="hidden" name="h"><input type="submit">
<img src="/x.png" alt=""><svg role="img"><title>A chart</title></svg>
<button aria-label="Close">×</button><button>Go</button>
<div style="overflow-x: auto"><div style="width: 600px">a wide chart, in its box</div></div>
</body></html>"""


def test_it_names_each_fault_on_a_faulty_page(page):
    page.set_content(FAULTY)
    found = "\n".join(page.evaluate(ACCESSIBILITY))
    for said in ('<input id="bare" name="bare"> has no accessible name',
                 '<select id="menu" name="menu"> has no accessible name',
                 '<textarea name="notes"> has no accessible name',
                 '2 <h1> (want exactly one) "One", "Two"',
                 '<h3> "Skipped a level" follows <h1>: a level is skipped',
                 '<img> src="/chart.png" has no alt text',
                 '<svg> has no <title>, aria-label or aria-labelledby',
                 '<button> has no name',
                 'id "twice" is used by 2 elements'):
        assert said in found
    assert found.count("<button> has no name") == 2
    page.set_viewport_size(PHONE)
    assert page.evaluate(OVERFLOW)[0].startswith("the page is ")


def test_it_finds_nothing_on_a_page_without_faults(page):
    page.set_content(FINE)
    assert page.evaluate(ACCESSIBILITY) == []
    page.set_viewport_size(PHONE)
    assert page.evaluate(OVERFLOW) == []


def test_axe_names_the_rule_of_each_serious_or_critical_violation(page):
    from tests.browser.pages import Crawl

    page.set_content(FAULTY)
    crawl = Crawl(page, "")
    crawl.check("the faulty page")
    told = crawl.told()
    assert "the faulty page" in told
    assert "button-name (critical)" in told and "image-alt (critical)" in told
    assert "label (critical)" in told
    page.set_content(FINE.replace("<body>", "<head><title>Fine</title></head><body>"))
    crawl = Crawl(page, "")
    crawl.check("the fine page")
    assert crawl.problems == {}
