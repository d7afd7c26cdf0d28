"""The options that give min.insync.replicas where the metadata sets none
(``partitions``, ``summary``): see :mod:`metashell.queries.min_isr`."""

from __future__ import annotations

from metashell.queries.min_isr import NAME, MinIsr, static_value

HELP = f"""\
{NAME}: the topic's config, else the dynamic config of the broker
leading the partition, else the cluster default (the broker <default>
config), all from the metadata; else the brokers' static value, which
the metadata does not hold: --min-isr N, or the {NAME} of the
server.properties given with --broker-config FILE (Kafka's default 1
where it sets none); else 1, assumed, with a warning."""


def add_min_isr_options(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--min-isr", type=int, metavar="N",
                       help=f"the brokers' static {NAME} (where the metadata sets none)")
    group.add_argument("--broker-config", metavar="FILE",
                       help=f"a broker's server.properties, for its static {NAME}")


def min_isr_of(engine, args) -> MinIsr:
    """The min ISR of the session's configs and the options given."""
    return MinIsr(engine.config_values(NAME), static_value(args.min_isr, args.broker_config))


def warn_if_assumed(ctx, min_isr: MinIsr) -> None:
    note = min_isr.assumed_note()
    if note is not None:
        ctx.warn(note, problem=False)
