"""A brand's data as a whole (issue 31): written out as one JSON file (`exporting`) in the
layout `layout` reads and writes, loaded back (`importing`), removed with its tables
(`removing`), and deleted with 30 days to undo (`archives`). docs/operating.md, "A brand's
data"."""
