"""What a member does to a task of their brand (issue 12): take it, extend their hold once,
release it, or mark it done (its step proposed to the gate), each through
`timekeeping.jobs.tasks`. What happened is said in a sentence, a refusal (`TaskRefused`) in
words, never as an error page. The dates assigned to a member are acted on through the portal's
controls (`timekeeping.portals.controls`: `clocks.acknowledge`, `clocks.mark_done`,
`clocks.choose`), which say what happened the same way and offer its Undo; and reassigned
through the console's Assign (`assign`), to the same choices.

Each task control runs in one transaction that first locks the task's job, as the gate does:
the gate (which `finish` calls, as does a rung's `run` of the same job) holds the job before
its tasks, so a control and a step never wait on each other in opposite orders.
"""

from __future__ import annotations

from django.db import transaction

from timekeeping.basics import refusals, shown
from timekeeping.console.controls import CONTROLS
from timekeeping.jobs import tasks
from timekeeping.models import Job, Member, Occurrence, Task
from timekeeping.portals.controls import Said

VERBS = {  # the address's verb: what it calls, and how a refusal starts
    "take": (tasks.take, "Not taken"),
    "extend": (tasks.extend, "Not extended"),
    "release": (tasks.release, "Not released"),
    "done": (tasks.finish, "Not done"),
}


def act(verb: str, task: Task, member: Member, *, zone: str) -> Said:
    function, refused_head = VERBS[verb]
    with transaction.atomic():
        list(Job.objects.select_for_update().filter(pk=task.job_id).values_list("pk"))
        try:
            result = function(task, member)
        except tasks.TaskRefused as refused:
            return Said(False, f"{refused_head}: {_words(refused)}.")
    if verb == "take":
        until = shown.moment(result.held_until, zone)
        return Said(True, f"Taken: {task.title} is yours until {until}.")
    if verb == "extend":
        return Said(True, f"Extended: {task.title} is yours until "
                          f"{shown.moment(result.held_until, zone)}. A hold extends once.")
    if verb == "release":
        return Said(True, f"Released: {task.title} is open in the pool again.")
    return Said(True, f"Done: {task.title}; its step '{task.step}' committed.")


def assign(occurrence: Occurrence, value: str, *, by: str) -> Said:
    """Assign the date to one of its brand's people, its owner (`OWNER`) or nobody (""):
    the console's Assign, its checks and its words."""
    _, act = CONTROLS["assign"]
    said = act(occurrence, {"member": value}, by, occurrence.clock.brand)
    return Said(said.ok, said.text, said.undo)


def _words(refused: tasks.TaskRefused) -> str:
    """A task's refusal is a sentence already; the gate's (from `finish`) is a code, said in
    words with the gate's reason."""
    if refused.code in refusals.GATE:
        return f"{refusals.gate(refused.code).why} ({refused.message})"
    return refused.message
