"""The users of bench/load.py (issue 31, "Load held"): people signed in on the console and the
portal, and programs with an API key, each reading and writing as its door allows.

bench/load.py sets `Cast.world` (what the users act on: the brand, its subjects and jobs, the
open dates, the API keys) before it starts them, and counts `Cast.signed_in`. Every request
is judged by its status (a page 200, never a redirect to sign in; a POST that makes something
201); anything else is a failure, named by its status. Each user acts on dates of its own (the
n-th console, portal and API user on the n-th subject with open dates, each on another date
of it), so no two users undo each other's acknowledgement.

Importing this module imports locust, which patches the standard library for gevent unless
LOCUST_SKIP_MONKEY_PATCH is set (bench/load.py's fill, which runs Django, sets it).
"""

from __future__ import annotations

import itertools
import random
import re
import uuid
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta

from locust import HttpUser, between, task

PASSWORD = "pw"  # bench/pages.py's, for every person of the world
# A control's row saying it did nothing (templates/console/_date_row.html, portal/_row.html).
REFUSED = re.compile(r'class="(outcome|said) refused"')


class Cast:
    """What the users act on (the world) and how many have signed in."""

    world: dict = {}
    signed_in = 0
    numbers: dict[str, Iterator[int]] = defaultdict(itertools.count)


class Person(HttpUser):
    """A person signed in at /accounts/login/ as `{role}-{n}`, the n-th of its kind."""

    abstract = True
    wait_time = between(1, 3)
    role = ""

    def on_start(self) -> None:
        self.n = next(Cast.numbers[self.role])
        self.brand = Cast.world["brand"]
        self.mine = Cast.world["open"][self.n % len(Cast.world["open"])]
        self.sign_in()
        Cast.signed_in += 1

    def sign_in(self) -> None:
        self.get("sign in: the form", "/accounts/login/")
        with self.client.post("/accounts/login/", name="sign in", allow_redirects=False,
                              catch_response=True, data={
                                  "username": f"{self.role}-{self.n}", "password": PASSWORD,
                                  "csrfmiddlewaretoken": self.client.cookies.get("csrftoken")},
                              ) as answer:
            if answer.status_code != 302 or "login" in answer.headers.get("Location", ""):
                answer.failure(f"HTTP {answer.status_code}: not signed in")

    def get(self, name: str, path: str, **params) -> str:
        """A page, 200 or an error; its text."""
        with self.client.get(path, name=name, params=params, allow_redirects=False,
                             catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(f"HTTP {answer.status_code}")
            return answer.text

    def control(self, name: str, path: str, data: dict) -> str:
        """A date's control as htmx posts it: the row comes back in place."""
        headers = {"HX-Request": "true", "X-CSRFToken": self.client.cookies.get("csrftoken")}
        with self.client.post(path, name=name, data=data, headers=headers,
                              allow_redirects=False, catch_response=True) as answer:
            refused = REFUSED.search(answer.text)
            if answer.status_code != 200 or refused:
                answer.failure(f"HTTP {answer.status_code}" + (": refused" if refused else ""))
            return answer.text

    def acknowledge_and_undo(self, door: str, clock: str, item: str) -> None:
        row = self.control(f"{door}: acknowledge", f"{self.base}/clocks/{clock}/acknowledge",
                           {"item": item})
        undo = re.search(r'"([^"\s]*/records/rec_[^"/\s]+/undo)"', row)
        if undo:  # none when it was acknowledged already (an undo of before failed)
            self.control(f"{door}: undo", undo.group(1), {})


class ConsoleUser(Person):
    role = "staff"

    @property
    def base(self) -> str:
        return f"/console/{self.brand}"

    @task(3)
    def at_risk(self) -> None:
        self.get("console: at risk", f"{self.base}/")

    @task(2)
    def subjects(self) -> None:
        self.get("console: subjects", f"{self.base}/subjects/", page=random.randint(1, 5))

    @task(1)
    def search(self) -> None:
        self.get("console: subjects, searched", f"{self.base}/subjects/",
                 q=f"Subject {random.randint(1, 99)}")

    @task(3)
    def subject(self) -> None:
        self.get("console: a subject", f"{self.base}/subjects/"
                 f"{random.choice(Cast.world['subjects'])}/")

    @task(1)
    def acknowledge(self) -> None:
        self.acknowledge_and_undo("console", self.mine["file"], "US-NY")


class PortalUser(Person):
    role = "buyer"
    base = "/portal"

    @task(2)
    def home(self) -> None:
        self.get("portal: home", "/portal/")

    @task(3)
    def dates(self) -> None:
        self.get("portal: a subject's dates", f"/portal/subjects/{self.mine['subject']}/")

    @task(1)
    def acknowledge(self) -> None:
        self.acknowledge_and_undo("portal", self.mine["pay"], "")


class ApiUser(HttpUser):
    """A program with its own API key."""

    wait_time = between(1, 3)

    def on_start(self) -> None:
        self.n = next(Cast.numbers["api"])
        self.mine = Cast.world["open"][self.n % len(Cast.world["open"])]
        self.client.headers["Authorization"] = f"Bearer {Cast.world['keys'][self.n]}"
        Cast.signed_in += 1

    def call(self, name: str, method: str, path: str, body: dict | None = None,
             expect: int = 200, **params) -> dict:
        with self.client.request(method, f"/api/{path}", name=name, json=body, params=params,
                                 allow_redirects=False, catch_response=True) as answer:
            if answer.status_code != expect:
                answer.failure(f"HTTP {answer.status_code}: {answer.text[:120]}")
                return {}
            return answer.json()

    @task(3)
    def subjects(self) -> None:
        self.call("api: GET subjects", "GET", "subjects", limit=50,
                  offset=random.randint(0, 900))

    @task(2)
    def jobs(self) -> None:
        self.call("api: GET jobs", "GET", "jobs", limit=50)

    @task(2)
    def records(self) -> None:
        self.call("api: GET records", "GET", "records", limit=50, subject=self.mine["subject"])

    @task(1)
    def job(self) -> None:
        self.call("api: GET a job", "GET", f"jobs/{random.choice(Cast.world['jobs'])}")

    @task(1)
    def calendar(self) -> None:
        self.call("api: GET a subject's calendar", "GET",
                  f"subjects/{random.choice(Cast.world['subjects'])}/calendar")

    @task(1)
    def acknowledge(self) -> None:
        said = self.call("api: POST acknowledge", "POST", f"clocks/{self.mine['file']}/acknowledge",
                         {"item": "US"})
        if said.get("undo"):
            self.call("api: POST undo", "POST", f"records/{said['undo']['record']}/undo")

    @task(1)
    def new_client(self) -> None:
        """A subject made, its return ordered, and a relief notice moving its dates only."""
        key = f"load-{uuid.uuid4().hex[:12]}"
        made = self.call("api: POST subjects", "POST", "subjects", {
            "kind": "taxpayer", "key": key, "name": f"Load taxpayer {key}",
            "zone": "America/New_York"}, expect=201)
        period = random.randint(2027, 2035)
        if made and self.call("api: POST jobs", "POST", "jobs", {
                "service": "annual-return", "subject": made["id"], "period": str(period),
                "input": {"jurisdictions": ["US", "US-CA", "US-NY"]}}, expect=201):
            due = date(period + 1, 4, 15)
            self.call("api: POST postponements", "POST", "owner/calendar/postponements", {
                "from": due.isoformat(), "through": (due + timedelta(days=7)).isoformat(),
                "to": (due + timedelta(days=45)).isoformat(), "where": {"key": key},
                "notice": "Relief for one taxpayer (load bench)"}, expect=201)


