// Accessibility basics, read from the page as the browser built it (tests/browser/conftest.py).
() => {
  const problems = [];
  const text = (el) => (el.textContent || '').replace(/\s+/g, ' ').trim();
  const describe = (el) => {
    let said = '<' + el.tagName.toLowerCase();
    for (const name of ['id', 'name', 'type', 'class']) {
      if (el.getAttribute(name)) said += ` ${name}="${el.getAttribute(name)}"`;
    }
    return said + '>';
  };
  const labelledBy = (el) => (el.getAttribute('aria-labelledby') || '').split(/\s+/)
    .filter(Boolean).map((id) => document.getElementById(id)).filter(Boolean).map(text)
    .join(' ').trim();
  const ariaName = (el) => (el.getAttribute('aria-label') || '').trim() || labelledBy(el);
  const labels = [...document.querySelectorAll('label')];
  const skipped = ['hidden', 'submit', 'button', 'reset', 'image'];
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.tagName === 'INPUT' && skipped.includes((el.getAttribute('type') || '').toLowerCase())) continue;
    const byFor = el.id && labels.some((label) => label.htmlFor === el.id && text(label));
    const wrapping = el.closest('label');
    if (!(byFor || (wrapping && text(wrapping)) || ariaName(el))) {
      problems.push(`${describe(el)} has no accessible name (no <label for>, wrapping label, aria-label or aria-labelledby)`);
    }
  }
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')];
  const firsts = headings.filter((h) => h.tagName === 'H1');
  if (firsts.length !== 1) {
    problems.push(`${firsts.length} <h1> (want exactly one)${firsts.map((h) => ` "${text(h)}"`).join(',')}`);
  }
  let previous = 0;
  for (const h of headings) {
    const level = Number(h.tagName[1]);
    if (level > previous + 1) {
      problems.push(`<h${level}> "${text(h)}" follows ${previous ? '<h' + previous + '>' : 'no heading'}: a level is skipped`);
    }
    previous = level;
  }
  for (const img of document.querySelectorAll('img')) {
    if (!img.hasAttribute('alt') && !ariaName(img) && !(img.getAttribute('title') || '').trim()) {
      problems.push(`${describe(img)} src="${img.getAttribute('src')}" has no alt text`);
    }
  }
  for (const svg of document.querySelectorAll('svg[role="img"]')) {
    const title = svg.querySelector(':scope > title');
    if (!(title && text(title)) && !ariaName(svg) && !(svg.getAttribute('title') || '').trim()) {
      problems.push(`${describe(svg)} has no <title>, aria-label or aria-labelledby`);
    }
  }
  for (const button of document.querySelectorAll('button, input[type="submit"], input[type="button"], input[type="reset"], [role="button"]')) {
    const own = button.tagName === 'INPUT'
      ? (button.value || (button.type === 'button' ? '' : button.type)).trim() : text(button);
    if (!(own || ariaName(button) || (button.getAttribute('title') || '').trim())) {
      problems.push(`${describe(button)} has no name`);
    }
  }
  const seen = {};
  for (const el of document.querySelectorAll('[id]')) seen[el.id] = (seen[el.id] || 0) + 1;
  for (const [id, count] of Object.entries(seen)) {
    if (count > 1) problems.push(`id "${id}" is used by ${count} elements`);
  }
  return problems;
}
