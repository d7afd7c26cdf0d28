"""The contract's tree (spec section 3) over a replayed image: its shape,
sorting, values, redaction, and that every listed child resolves."""

from __future__ import annotations

from metashell.fs.root import build_root
from metashell.fs.tree import REDACTED
from metashell.fs.walk import walk
from metashell.replay.image import Image
from tests.support.replay import Log, cat, leaves, load, ls, node
from tests.support.records import rich_cluster, topic, uid
from tests.support.walked import walked_text

T1, T2 = uid(1), uid(2)
TOP = ["acls", "brokers", "clientQuotas", "configs", "controllers", "delegationTokens", "features",
       "image", "local", "metadataQuorum", "producerIds", "scram", "topicIds", "topics"]


class TestShape:
    def test_top_level(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert s.root.children() == TOP
        assert all(s.root.child(n).is_dir for n in TOP)

    def test_every_listed_child_resolves(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        missing = []

        def visit(n, path):
            for name in n.children():
                c = n.child(name)
                if c is None:
                    missing.append(f"{path}/{name}")
                elif c.is_dir:
                    visit(c, f"{path}/{name}")
        visit(s.root, "")
        assert missing == []
        assert len(list(walk(s.root, "/"))) > 60

    def test_unknown_names_are_none(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        for path in ("/nope", "/brokers/3", "/brokers/x", "/topics/baz", "/topics/foo/2",
                     "/topics/foo/x", "/topics/foo/0/nope", f"/topicIds/{uid(77)}", "/configs/group",
                     "/configs/topic/bar", "/clientQuotas/client-id", "/acls/nope",
                     "/scram/SCRAM-SHA-1", "/delegationTokens/nope", "/features/nope"):
            assert node(s.root, path) is None, path

    def test_topics_and_topic_ids_show_the_same(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        by_name = leaves(s.root, ["topics"])
        by_id = leaves(s.root, ["topicIds"])
        assert {k.replace("/topics/foo", "/topicIds/" + T1).replace("/topics/bar", "/topicIds/" + T2): v
                for k, v in by_name.items()} == by_id

    def test_sorting(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert ls(s.root, "/brokers") == ["1", "2", "10"]                  # numeric
        assert ls(s.root, "/topics/foo") == ["0", "1", "10", "id", "name"]  # partitions first
        assert ls(s.root, "/topics") == ["bar", "foo"]
        assert ls(s.root, "/configs/broker") == ["1", "10", "2", "<default>"]   # not all numbers
        assert ls(s.root, "/features") == ["group.version", "metadata.version"]

    def test_values(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert cat(s.root, "/brokers/1/isFenced") is False
        assert cat(s.root, "/brokers/10/isFenced") is True
        assert cat(s.root, "/brokers/1/registeredAt") == "2023-11-14T22:13:23.000Z"   # 4th batch
        assert cat(s.root, "/controllers/3000/registration")["controllerId"] == 3000
        assert cat(s.root, "/topics/foo/0/data")["leader"] == 2
        assert cat(s.root, "/clientQuotas/user/<default>/consumer_byte_rate") == 5.0
        assert cat(s.root, f"/acls/{uid(900)}")["resourceType"] == "CLUSTER"
        assert cat(s.root, f"/acls/{uid(900)}")["operation"] == "ALL"
        assert cat(s.root, "/scram/SCRAM-SHA-512/alice")["salt"] == REDACTED
        assert cat(s.root, "/delegationTokens/tok")["owner"] == "User:alice"
        assert cat(s.root, "/producerIds/nextProducerId") == 7000
        assert cat(s.root, "/configs/broker/<default>/ssl.keystore.password") == REDACTED
        assert cat(s.root, "/features/metadata.version") == 27

    def test_show_secrets_changes_only_secrets(self, tmp_path):
        hidden = leaves(load(tmp_path, *rich_cluster()).root)
        shown = leaves(load(tmp_path / "b", *rich_cluster(), show_secrets=True).root)
        differ = sorted(k for k in hidden if hidden[k] != shown.get(k) and not k.startswith("/local"))
        assert differ == ["/configs/broker/<default>/ssl.keystore.password",
                          "/image/configs/BROKER/ssl.keystore.password",
                          "/image/scram/SCRAM-SHA-512/alice",
                          "/scram/SCRAM-SHA-512/alice"]
        assert shown["/configs/broker/<default>/ssl.keystore.password"] == "pw"


class TestEmpty:
    def test_an_empty_image(self):
        root = build_root(Image())
        assert root.children() == TOP
        for name in ("acls", "brokers", "clientQuotas", "configs", "controllers", "delegationTokens",
                     "features", "topicIds", "topics"):
            assert ls(root, "/" + name) == [], name
        assert ls(root, "/scram") == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert ls(root, "/scram/SCRAM-SHA-256") == []
        assert cat(root, "/producerIds/nextProducerId") == -1
        assert cat(root, "/metadataQuorum/leaderId") == -1
        assert cat(root, "/metadataQuorum/offset") == -1
        assert cat(root, "/metadataQuorum/time") is None
        assert root.last_change() is None

    def test_an_empty_log(self, tmp_path):
        path = tmp_path / "00000000000000000000.log"
        path.write_bytes(b"")
        from metashell.session.files import open_session
        s = open_session(path)
        assert ls(s.root, "/topics") == []


class TestLeafChanges:
    def test_quorum_and_root(self, tmp_path):
        log = Log()
        log.leader(1, epoch=3)
        log.add(topic("foo", T1))
        from metashell.session.files import open_session
        s = open_session(log.write(tmp_path))
        assert node(s.root, "/metadataQuorum/leaderId").last_change()[0] == 0
        assert s.root.last_change()[0] == 1


class TestLongListings:
    """A listing of thousands of topics goes straight to the oldest generation:
    a caller keeping it does not have the next young collections walk it."""

    def test_topics_listings_are_kept_old(self, tmp_path):
        import gc

        from metashell.gcpause import LONG_LISTING
        s = load(tmp_path, [topic(f"t{i:05d}", uid(10 + i)) for i in range(LONG_LISTING)])
        for path in ("/topics", "/topicIds"):
            names = node(s.root, path).children()
            assert len(names) == LONG_LISTING
            assert any(o is names for o in gc.get_objects(generation=2)), path
        short = node(s.root, "/features").children()
        assert not any(o is short for o in gc.get_objects(generation=2))


class TestOldShellPaths:
    """Kafka 2.8-3.4's names of what the native tree names otherwise
    (``/client-quotas``, ``/acl/id``, ``/producerIds/nextBlockStartId``, ...)
    reach the same nodes, and no listing shows them."""

    @staticmethod
    def run(session, *words, cwd=None):
        import io

        from metashell.commands import Context, run_words
        out, err = io.StringIO(), io.StringIO()
        ctx = Context.for_session(session, out=out, err=err)
        if cwd is not None:
            assert run_words(ctx, ["cd", cwd]) == 0, err.getvalue()
        status = run_words(ctx, list(words))
        return status, out.getvalue(), err.getvalue()

    def test_the_old_names_reach_the_native_values(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert cat(s.root, "/client-quotas/user/<default>/consumer_byte_rate") == 5.0
        assert cat(s.root, f"/acl/id/{uid(900)}") == cat(s.root, f"/acls/{uid(900)}")
        assert cat(s.root, "/producerIds/nextBlockStartId") == 7000
        assert cat(s.root, "/producerIds/lastBlockBrokerId") == 1
        assert cat(s.root, "/producerIds/lastBlockBrokerEpoch") == 10
        assert ls(s.root, "/acl") == ["id"]
        assert ls(s.root, "/acl/id") == ls(s.root, "/acls") == [uid(900)]
        assert ls(s.root, "/client-quotas") == ls(s.root, "/clientQuotas") == ["user"]
        for name in ("nextBlockStartId", "lastBlockBrokerId", "lastBlockBrokerEpoch"):
            assert cat(build_root(Image()), f"/producerIds/{name}") == -1

    def test_no_listing_shows_them(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert s.root.children() == TOP
        assert ls(s.root, "/producerIds") == ["lastBrokerEpoch", "lastBrokerId", "nextProducerId"]
        assert not [p for p, _ in walk(s.root, "/")
                    if "client-quotas" in p or "/acl/" in p or "Block" in p]
        _, out, _ = self.run(s, "ls", "/*")
        assert "client-quotas" not in out and "acl:" not in out

    def test_every_command_takes_them(self, tmp_path):
        s = load(tmp_path, *rich_cluster())
        assert self.run(s, "find", "/acl") == (0, f"/acl\n/acl/id\n/acl/id/{uid(900)}\n", "")
        status, out, _ = self.run(s, "pwd", cwd="/client-quotas/user")
        assert (status, out) == (0, "/client-quotas/user\n")
        status, out, _ = self.run(s, "ls", cwd="/client-quotas/user")
        assert (status, out) == (0, "<default>\n")
        _, old, _ = self.run(s, "tree", "/client-quotas")
        _, new, _ = self.run(s, "tree", "/clientQuotas")
        assert old.replace("client-quotas", "clientQuotas") == new != ""
        _, old, _ = self.run(s, "tree", "/acl/id")
        assert old == self.run(s, "tree", "/acls")[1].replace("acls", "id", 1) != ""
        assert self.run(s, "cat", "/producerIds/nextBlockStartId") == (0, "7000\n", "")
        for old, new in (("/producerIds/nextBlockStartId", "/producerIds/nextProducerId"),
                         ("/client-quotas/user/<default>", "/clientQuotas/user/<default>"),
                         (f"/acl/id/{uid(900)}", f"/acls/{uid(900)}")):
            status, out, _ = self.run(s, "changes", old)
            assert (status, out) == self.run(s, "changes", new)[:2] and out, old


def test_a_topic_made_at_once_prints_as_walked(tmp_path):
    """Topics make their ``tree`` text at once (native and ``/image``): the
    same lines as walking their nodes."""
    from metashell.fs.walk import tree_text_lines
    s = load(tmp_path, *rich_cluster())
    for path in ("/", "/topics", "/topicIds", f"/topicIds/{T1}", "/image/topics",
                 "/image/topics/byName/foo", "/image"):
        n = node(s.root, path)
        for indent in (0, 2):
            made = "\n".join(tree_text_lines(n, indent)).split("\n")
            assert made == walked_text(n, indent), path
    assert node(s.root, "/topics/foo").bulk().tree_lines(0) is not None
    assert node(s.root, "/image/topics/byId/" + T1).bulk().tree_lines(0) is not None


def test_topics_listed_at_once_find_as_walked(tmp_path):
    """``find`` lists a topic's subtree at once (``Bulk.subtree_names``,
    native and ``/image``, each topic's partitions found once per walk): the
    same paths and kinds as walking its nodes, from anywhere."""
    from metashell.fs.walk import walk_names
    s = load(tmp_path, *rich_cluster())
    for path in ("/", "/topics", "/topicIds", f"/topicIds/{T1}", "/topics/foo", "/image/topics",
                 "/image/topics/byName/foo", "/image", "/brokers"):
        n = node(s.root, path)
        assert list(walk_names(n, path)) == [(p, c.is_dir) for p, c in walk(n, path)], path
    assert node(s.root, "/topics/foo").bulk().subtree_names({}) is not None
    assert node(s.root, "/image/topics/byId/" + T1).bulk().subtree_names({}) is not None
