"""A brand's export and import by size (issue 31): each `manage.py brand export` and `brand
import` run in a process of its own, its peak resident memory and wall time printed, for a
brand with a small and with a large number of rows (no-op timers, armed over a year).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/export.py

Constant memory means the large brand's peak is about the small one's. Ends with one line:
small_rows=… large_rows=… export_small_mb=… export_large_mb=… import_small_mb=…
import_large_mb=… export_large_rows_s=… import_large_rows_s=… Drops its scratch database.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory import peak_mb  # noqa: E402
from bench.tick import NOW, copy_timers, postgres_base, scratch_database, setup_django  # noqa: E402,I001


def round_trip(brand: str, rows: int, folder: Path) -> tuple[float, float, float, float]:
    """Export the brand, remove it, import it: (export MB, export s, import MB, import s)."""
    from timekeeping.brands import removing
    from timekeeping.models import Brand, Timer

    path = folder / f"{brand}.json"
    out_mb, out_s, _ = peak_mb(["brand", "export", brand, "--out", str(path)])
    removing.remove(Brand.objects.get(pk=brand))
    in_mb, in_s, said = peak_mb(["brand", "import", str(path)])
    if Timer.objects.filter(brand_id=brand).count() != rows:
        raise SystemExit(f"the import brought back {Timer.objects.filter(brand_id=brand).count()}"
                         f" timers, not {rows}: {said}")
    size = path.stat().st_size / 1e6
    print(f"{rows:,} timers: export {out_mb:.1f} MB in {out_s:.1f} s ({size:.1f} MB file), "
          f"import {in_mb:.1f} MB in {in_s:.1f} s", flush=True)
    return out_mb, out_s, in_mb, in_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=200_000)
    options = parser.parse_args()
    base = postgres_base()
    with scratch_database(base, "kt_bench_export") as url, \
            tempfile.TemporaryDirectory() as folder:
        setup_django(url)
        from timekeeping.models import Brand

        found = {}
        for name, rows in (("small", options.small), ("large", options.large)):
            brand = Brand.objects.create(name=f"Export {name}", slug=f"export-{name}").pk
            copy_timers((brand, NOW + timedelta(seconds=1 + (n * 104729) % (365 * 86400)))
                        for n in range(rows))
            found[name] = round_trip(brand, rows, Path(folder))
        small, large = found["small"], found["large"]
        print(f"small_rows={options.small} large_rows={options.large} "
              f"export_small_mb={small[0]:.1f} export_large_mb={large[0]:.1f} "
              f"import_small_mb={small[2]:.1f} import_large_mb={large[2]:.1f} "
              f"export_large_rows_s={options.large / large[1]:.0f} "
              f"import_large_rows_s={options.large / large[3]:.0f}")


if __name__ == "__main__":
    main()
