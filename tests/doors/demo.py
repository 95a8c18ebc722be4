"""The demo receiver's doors (issue 30). The suite runs as production does, with DEBUG off,
where every door of it is 404 to everyone (`DOORS`). With DEBUG on, as in the demo
(`WITH_DEBUG`, tests/test_authorization.py): its page lists what arrived for the brands a
person owns (404 for one who owns none; a caller with no session is sent to sign in); a post
takes no session, so everyone hears the same: 400 for A's endpoint, the post being unsigned,
and 404 for an endpoint that does not exist."""

from tests.doors import ACTORS, Endpoint

MISSING_ENDPOINT = "whe_Missing0000000000"
PAGE, POST = "/demo/receiver/", f"/demo/receiver/{MISSING_ENDPOINT}/"
POST_A = "/demo/receiver/{webhook}/"

DOORS = [
    Endpoint("demo receiver page, DEBUG off", "get", PAGE, dict.fromkeys(ACTORS, 404)),
    Endpoint("demo receiver post, DEBUG off", "post", POST, dict.fromkeys(ACTORS, 404)),
    Endpoint("demo receiver post to A's, DEBUG off", "post", POST_A, dict.fromkeys(ACTORS, 404)),
]

WITH_DEBUG = [
    Endpoint("demo receiver page", "get", PAGE, {
        **dict.fromkeys(ACTORS, 404), "owner_a": 200, "owner_b": 200, "anonymous": 302,
        "key_a": 302, "key_b": 302}),
    Endpoint("demo receiver post, no such endpoint", "post", POST, dict.fromkeys(ACTORS, 404)),
    Endpoint("demo receiver post to A's, unsigned", "post", POST_A, dict.fromkeys(ACTORS, 400)),
]
