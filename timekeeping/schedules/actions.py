"""Built-in actions for schedules: registered by `timekeeping.schedules.register`."""

from timekeeping.schedules.engine import context
from timekeeping.timers import records


def heartbeat() -> int:
    """The demo brand's heartbeat: a `heartbeat` record each run, on the run's brand."""
    run = context()
    if run is None or run.brand is None:
        return 0
    records.write("heartbeat", brand=run.brand, instant=run.tick, test_clock=run.test_clock,
                  data={"schedule": run.schedule, "due": run.due})
    return 1
