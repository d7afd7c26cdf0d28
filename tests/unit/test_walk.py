from metashell.fs.node import DictDir, Leaf, from_json
from metashell.fs.walk import walk


def tree():
    return from_json("", {
        "alpha": {"beta": {}, "theta": {"x": 1}},
        "foo": {"a": 2, "beta": {}},
        "zeta": 3,
    })


def test_preorder_sorted():
    assert [p for p, _ in walk(tree(), "/")] == [
        "/", "/alpha", "/alpha/beta", "/alpha/theta", "/alpha/theta/x",
        "/foo", "/foo/a", "/foo/beta", "/zeta",
    ]


def test_nodes_match_paths():
    root = tree()
    for path, node in walk(root, "/"):
        assert node.name == ("" if path == "/" else path.rsplit("/", 1)[1])
    assert dict(walk(root, "/"))["/foo/a"].value() == 2


def test_subtree_with_path_as_typed():
    root = tree()
    assert [p for p, _ in walk(root.child("alpha"), "alpha")] == [
        "alpha", "alpha/beta", "alpha/theta", "alpha/theta/x"]
    assert [p for p, _ in walk(root.child("alpha"), "/a*")] == [
        "/a*", "/a*/beta", "/a*/theta", "/a*/theta/x"]
    assert [p for p, _ in walk(root.child("alpha"), "alpha/")] == [
        "alpha/", "alpha/beta", "alpha/theta", "alpha/theta/x"]


def test_file_yields_itself():
    root = tree()
    assert [p for p, _ in walk(root.child("zeta"), "/zeta")] == ["/zeta"]


def test_empty_dir():
    assert list(walk(DictDir("e"), "/e"))[0][0] == "/e"
    assert len(list(walk(DictDir("e"), "/e"))) == 1


def test_numeric_child_order():
    root = from_json("", {str(i): {} for i in (10, 9, 100, 1)})
    assert [p for p, _ in walk(root, "/")] == ["/", "/1", "/9", "/10", "/100"]


def test_listed_child_returning_none_is_skipped():
    class Flaky(DictDir):
        def children(self):
            return ["a", "missing"] + super().children()

        def child(self, name):
            return None if name in ("a", "missing") else super().child(name)

    root = DictDir("", {"d": Flaky("d", {"z": Leaf("z", 1)}), "e": Leaf("e", 2)})
    assert [p for p, _ in walk(root, "/")] == ["/", "/d", "/d/z", "/e"]


def test_lazy():
    made = []

    class Counting(DictDir):
        def child(self, name):
            made.append(name)
            return super().child(name)

    root = Counting("", {"a": Counting("a", {"x": Leaf("x")}), "b": Leaf("b")})
    it = walk(root, "/")
    assert next(it)[0] == "/"
    assert made == []
    assert next(it)[0] == "/a"
    assert made == ["a"]


def test_deep_tree_does_not_recurse():
    depth = 5000
    node = DictDir("leaf")
    for i in range(depth):
        node = DictDir(f"d{i}", {node.name: node})
    paths = [p for p, _ in walk(node, "/")]
    assert len(paths) == depth + 1
