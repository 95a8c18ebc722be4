"""Events out (issue 30): the event catalogue, a brand's webhook endpoints, signed and retried
delivery through the outbox, the delivery log, and the guard that keeps them off our network."""


def register() -> None:
    """What the package wires, called by `TimekeepingConfig.ready`: each record that is an
    event goes to the endpoints that hear it (`publish.hear`), and the outbox sends its webhook
    channel with `sending.send`."""
    from timekeeping.models import Delivery
    from timekeeping.timers import outbox, records
    from timekeeping.webhooks import publish, sending

    records.listen(publish.hear)
    outbox.send_with(Delivery.Channel.WEBHOOK, sending.send)
