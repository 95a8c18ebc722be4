"""Which keys of a manifest run live on which of the brand's plans (S26): every key runs in
test (a test clock's world); live, a job or a subscription whose Service uses a key the
brand's plan lacks is refused with `plan_lacks_key`, naming the key and the plan.

    Free     a deadline and a late price, steps and their links, clocks on a job
    Launch   clocks that outlive their job, periods, kept facts, subscriptions with allowances,
             schedules and events that mint
    Team     a date sold as a promise (`guarantee`), a steward service (`steward`)

A job, subject or subscription keeps the plan it opened under (S24, `kept`): a downgrade
refuses new orders, never running work; `recurring.terms` says what stays on the old terms.
"""

from __future__ import annotations

from timekeeping.specs.services import ServiceSpec

PLANS = ("free", "launch", "team")
RANK = {plan: n for n, plan in enumerate(PLANS)}


class PlanLacksKey(Exception):
    code = "plan_lacks_key"

    def __init__(self, key: str, plan: str, needs: str):
        super().__init__(f"{key!r} runs live on the {needs} plan; the brand is on {plan} (it "
                         "runs on a test clock on any plan)")
        self.key, self.plan, self.needs = key, plan, needs


def kept(kept: str, current: str) -> str:
    """The plan running work runs live on (S24): the plan it opened under, kept to its end
    however far the brand's plan falls, or the brand's current plan when that is higher (an
    upgrade reaches running work at once). Empty `kept` (a row made outside the product's
    functions): the current plan."""
    if kept not in RANK:
        return current
    return kept if RANK[kept] > RANK.get(current, RANK["team"]) else current


def keys_of(spec: ServiceSpec) -> dict[str, str]:
    """The keys of a Service above Free, each with the plan it needs."""
    needed = {}
    if any(clock.lives_on_subject for clock in spec.clocks.values()):
        needed["clocks.lives_on"] = "launch"
    if spec.period.of != "none":
        needed["subject.period"] = "launch"
    if spec.keeps:
        needed["subject.keeps"] = "launch"
    if spec.plan.every:
        needed["price.every"] = "launch"
    if spec.plan.includes:
        needed["price.includes"] = "launch"
    if spec.plan.schedules:
        needed["on.schedule"] = "launch"
    if spec.plan.events:
        needed["on.event"] = "launch"
    if any(clock.guarantee for clock in spec.clocks.values()):
        needed["clocks.guarantee"] = "team"
    if spec.steward:
        needed["steward"] = "team"
    return needed


def check_live(plan: str, spec: ServiceSpec) -> None:
    """Refuse (PlanLacksKey) a Service that uses a key `plan` lacks, naming the one that needs
    the highest plan (so the plan named is the one the whole Service runs live on)."""
    lacking = sorted((-RANK[needs], key, needs) for key, needs in keys_of(spec).items()
                     if RANK[needs] > RANK.get(plan, RANK["team"]))
    if lacking:
        _, key, needs = lacking[0]  # the highest plan needed; among those, the first key
        raise PlanLacksKey(key, plan, needs)
