"""partitions: the partitions in the states operators look for."""

from __future__ import annotations

from metashell.commands.base import FAILED, NOT_FOUND, OK, Command, expand
from metashell.commands.kafka_topics import kafka_lines
from metashell.commands.min_isr_options import (HELP as MIN_ISR_HELP, add_min_isr_options,
                                                min_isr_of, warn_if_assumed)
from metashell.errors import MetashellError
from metashell.fs import paths
from metashell.render import json_text, style
from metashell.queries.partition_states import (MIN_ISR_STATES, STATES, PartitionRow,
                                                live_brokers, partition_rows, topics_by_name)

_ROWS_PER_WRITE = 1024


class Partitions(Command):
    name = "partitions"
    description = "List partitions, or those offline, under-replicated, ... (kafka-topics --describe)."
    needs_session = True
    dirs_only = True
    details = """\
One line per partition, sorted by topic and partition, as kafka-topics
--describe prints them: Topic, Partition, Leader (none when offline),
Replicas, Isr, and Elr and LastKnownElr where either is not empty,
Adding Replicas and Removing Replicas while it is reassigned. With state
options, only the partitions in any of those states; --broker narrows to
the partitions that broker holds or leads; PATHs (globs allowed) to those
topics (/topics/NAME) or partitions (/topics/NAME/N). With --under-min-isr
or --at-min-isr, each line ends with the MinIsr it was judged by and its
source (not with --kafka).

States (any of those given), as Kafka defines them (the README's
"Partition states"): --unavailable, --under-replicated, --under-min-isr
and --at-min-isr are kafka-topics' --unavailable-partitions, ... filters:
""" + "\n".join(f"  --{name:<22}{about}" for name, (about, _) in STATES.items()) + """

""" + MIN_ISR_HELP + """

--kafka: the layout of kafka-topics --describe itself: a header line per
topic (TopicId, PartitionCount, ReplicationFactor, Configs: the topic's own
and the cluster-wide broker defaults; not a broker's server.properties,
which the metadata does not hold), its partitions indented by a tab, Elr
and LastKnownElr on every line from metadata.version 3.8 on; with a state
option, only the partitions, as Kafka prints them. Topics in name order.

--output json: an array of {topicName, partitionId, leader, leaderEpoch,
replicas, isr, eligibleLeaderReplicas, lastKnownElr, addingReplicas,
removingReplicas, leaderRecoveryState, minIsr, minIsrSource} (Kafka's
field names and codes, as cat shows a partition; minIsrSource: topic,
broker N, cluster default, --min-isr, --broker-config, built-in default or
assumed), written as it is found.

Examples:
  partitions --under-replicated --offline
  partitions /topics/orders --not-preferred-leader
  -o json partitions --broker 3 | jq length"""

    def add_arguments(self, parser):
        parser.add_argument("targets", nargs="*", metavar="PATH",
                            help="topics or partitions (default: every topic)")
        for name, (about, _) in STATES.items():
            parser.add_argument(f"--{name}", dest=_dest(name), action="store_true", help=about)
        parser.add_argument("--broker", type=int, metavar="ID",
                            help="only partitions broker ID holds or leads")
        parser.add_argument("--kafka", action="store_true",
                            help="kafka-topics --describe's own layout (topic headers, tabs)")
        add_min_isr_options(parser)

    def run(self, ctx, args) -> int:
        image, engine = ctx.session.image, ctx.session.engine
        states = [name for name in STATES if getattr(args, _dest(name))]
        try:
            topics, only = _selection(ctx, image, args.targets)
        except LookupError as e:
            ctx.error(f"partitions: {e}: {NOT_FOUND}")
            return FAILED
        min_isr = min_isr_of(engine, args)
        rows = partition_rows(topics, min_isr, live_brokers(image), states, args.broker, only)
        by_min_isr = any(s in MIN_ISR_STATES for s in states)
        if ctx.json:
            _write_json(ctx, rows)
        elif args.kafka:
            _write_lines(ctx, kafka_lines(image, topics, rows, with_headers=not states))
        else:
            _write_lines(ctx, (row_text(row, ctx.color, by_min_isr) for row in rows))
        if ctx.json or by_min_isr:
            warn_if_assumed(ctx, min_isr)
        return OK


def _dest(state: str) -> str:
    return "state_" + state.replace("-", "_")


def _selection(ctx, image, targets: list[str]):
    """The topics to walk, in name order, and a test of (topic, partition
    id) for PATHs that name single partitions (None: all)."""
    if not targets:
        return topics_by_name(image), None
    chosen: dict[str, "set[int] | None"] = {}
    for target in targets:
        matches = expand(ctx, target)
        if not matches:
            raise LookupError(target)
        for match in matches:
            _choose(image, paths.split(match.path), chosen, target)
    topics = sorted((image.topics[tid] for tid in chosen), key=lambda t: t.name)
    if all(pids is None for pids in chosen.values()):
        return topics, None
    return topics, lambda topic, pid: chosen[topic.topic_id] is None or pid in chosen[topic.topic_id]


def _choose(image, parts: list[str], chosen: dict, target: str) -> None:
    if len(parts) not in (2, 3) or parts[0] not in ("topics", "topicIds"):
        raise MetashellError(f"{target}: not a topic or a partition (/topics/NAME[/N])")
    topic = image.topic_by_name(parts[1]) if parts[0] == "topics" else image.topics.get(parts[1])
    if topic is None or (len(parts) == 3 and not parts[2].isdigit()):
        raise MetashellError(f"{target}: not a topic or a partition (/topics/NAME[/N])")
    if len(parts) == 2:
        chosen[topic.topic_id] = None
    elif chosen.get(topic.topic_id, set()) is not None:
        chosen.setdefault(topic.topic_id, set()).add(int(parts[2]))


def _ids(values) -> str:
    return ",".join(map(str, values))


def row_text(row: PartitionRow, color: bool = False, by_min_isr: bool = False) -> str:
    """A partition as kafka-topics --describe prints it (tab-separated);
    ``by_min_isr``: and the min ISR it was judged by, and its source."""
    s = row.state
    leader = str(s.leader) if s.leader >= 0 else "none"
    text = (f"Topic: {row.topic}\tPartition: {s.partition_id}\tLeader: {leader}\t"
            f"Replicas: {_ids(s.replicas)}\tIsr: {_ids(s.isr)}")
    if s.elr or s.last_known_elr:
        text += f"\tElr: {_ids(s.elr)}\tLastKnownElr: {_ids(s.last_known_elr or ())}"
    if s.adding_replicas:
        text += f"\tAdding Replicas: {_ids(s.adding_replicas)}"
    if s.removing_replicas:
        text += f"\tRemoving Replicas: {_ids(s.removing_replicas)}"
    if by_min_isr:
        text += f"\tMinIsr: {row.min_isr.text()}"
    if s.leader < 0:
        return style(text, "bold red", color)
    return text


def row_json(row: PartitionRow) -> dict:
    s = row.state
    return {"topicName": row.topic, "partitionId": s.partition_id, "leader": s.leader,
            "leaderEpoch": s.leader_epoch, "replicas": s.replicas, "isr": s.isr,
            "eligibleLeaderReplicas": s.elr, "lastKnownElr": s.last_known_elr,
            "addingReplicas": s.adding_replicas, "removingReplicas": s.removing_replicas,
            "leaderRecoveryState": s.leader_recovery_state, "minIsr": row.min_isr.value,
            "minIsrSource": row.min_isr.source}


def _write_lines(ctx, texts) -> None:
    write, lines = ctx.out.write, []
    for text in texts:
        lines.append(text)
        if len(lines) >= _ROWS_PER_WRITE:
            write("\n".join(lines) + "\n")
            lines.clear()
    if lines:
        write("\n".join(lines) + "\n")


def _write_json(ctx, rows) -> None:
    """A JSON array written as the rows come (nothing holds them all)."""
    write, sep, parts = ctx.out.write, "[", []
    for row in rows:
        parts.append(sep + json_text(row_json(row)))
        sep = ","
        if len(parts) >= _ROWS_PER_WRITE:
            write("".join(parts))
            parts.clear()
    write("".join(parts) + ("]\n" if sep == "," else "[]\n"))
