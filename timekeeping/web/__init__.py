"""What every door on the web shares (docs/architecture.md): the page frame and where `/`
sends a person (`pages`), and the strict reading of requests (`strict`: JSON without NaN,
Infinity or lone surrogates, no NUL in a form). The console, the portals, the delivery portal
and the API import it; it imports none of them."""
