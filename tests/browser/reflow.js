// Whether the page scrolls sideways at its width (WCAG 1.4.10, reflow), and what makes it:
// the outermost elements reaching past the edge, leaving out what scrolls inside its own box
// (a wide chart or <pre> in an overflow: auto wrapper is allowed). At most five.
() => {
  const width = document.documentElement.clientWidth;
  // scrollWidth is rounded: a fraction of a pixel past the edge is not a sideways scroll.
  if (document.documentElement.scrollWidth <= width + 1) return [];
  const scrollsInside = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(up).overflowX)) return true;
    }
    return false;
  };
  const wide = [...document.querySelectorAll('body *')].filter((el) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.right > width + 1 && !scrollsInside(el);
  });
  const outermost = wide.filter((el) => !wide.includes(el.parentElement));
  const named = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const told = outermost.slice(0, 5).map((el) => {
    const right = Math.round(el.getBoundingClientRect().right);
    return `<${named(el)}> "${(el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40)}" reaches ${right}px`;
  });
  const page = `the page is ${document.documentElement.scrollWidth}px wide on a ${width}px screen`;
  return [told.length ? `${page}: ${told.join('; ')}` : page];
}
