import pytest

from metashell.fs.complete import Candidate, complete_path
from metashell.fs.node import DictDir, Leaf, from_json


@pytest.fixture
def root():
    return from_json("", {
        "image": {
            "topics": {"byName": {"foo": {}, "bar": {}}, "byId": {}},
            "features": {"finalized_x": 1},
            "cluster": {},
        },
        "local": {"version": "1", "commitId": "abc"},
        "my dir": {"a b": 1},
        ".hidden": 2,
    })


def texts(cands):
    return [c.text for c in cands]


def test_top_level_from_root(root):
    assert texts(complete_path(root, "/", "")) == [".hidden", "image/", "local/", "my dir/"]


def test_absolute_prefix(root):
    assert complete_path(root, "/", "/i") == [Candidate("/image/", True)]
    assert texts(complete_path(root, "/", "/")) == ["/.hidden", "/image/", "/local/", "/my dir/"]


def test_nested_directory_and_prefix(root):
    assert texts(complete_path(root, "/", "/image/t")) == ["/image/topics/"]
    assert texts(complete_path(root, "/", "/image/topics/by")) == ["/image/topics/byId/", "/image/topics/byName/"]
    assert texts(complete_path(root, "/", "/image/c")) == ["/image/cluster/"]


def test_files_have_no_slash(root):
    assert complete_path(root, "/", "/local/") == [Candidate("/local/commitId", False),
                                                    Candidate("/local/version", False)]
    assert complete_path(root, "/", "/image/features/f") == [Candidate("/image/features/finalized_x", False)]


def test_relative_keeps_prefix_as_typed(root):
    assert texts(complete_path(root, "/image", "topics/byName/")) == ["topics/byName/bar/", "topics/byName/foo/"]
    assert texts(complete_path(root, "/image/topics", "../c")) == ["../cluster/"]
    assert texts(complete_path(root, "/image/topics", ".././/c")) == [".././/cluster/"]
    assert texts(complete_path(root, "/", "//image//t")) == ["//image//topics/"]


def test_no_match(root):
    assert complete_path(root, "/", "/image/zz") == []
    assert complete_path(root, "/", "/nope/") == []
    assert complete_path(root, "/", "/nope/x") == []


def test_file_as_directory_gives_nothing(root):
    assert complete_path(root, "/", "/local/version/") == []
    assert complete_path(root, "/", "/local/version/x") == []


def test_exact_name_is_offered(root):
    assert texts(complete_path(root, "/", "/image")) == ["/image/"]
    assert texts(complete_path(root, "/", "/local/version")) == ["/local/version"]


def test_globs_are_not_expanded(root):
    assert complete_path(root, "/", "/im*/") == []
    assert complete_path(root, "/", "/image/*") == []


def test_names_with_spaces_are_raw(root):
    assert complete_path(root, "/", "my") == [Candidate("my dir/", True)]
    assert complete_path(root, "/", "my dir/") == [Candidate("my dir/a b", False)]


def test_dot_entries(root):
    assert texts(complete_path(root, "/", ".")) == ["./", "../", ".hidden"]
    assert texts(complete_path(root, "/image", "..")) == ["../"]
    assert texts(complete_path(root, "/image", "./")) == ["./cluster/", "./features/", "./topics/"]
    assert texts(complete_path(root, "/", ".h")) == [".hidden"]


def test_unlisted_directory_resolves_via_child():
    class Hidden(DictDir):
        def child(self, name):
            if name == "secret":
                return from_json("secret", {"inner": 1})
            return super().child(name)

    root = DictDir("", {"h": Hidden("h", {"shown": Leaf("shown", 1)})})
    assert texts(complete_path(root, "/", "/h/")) == ["/h/shown"]
    assert texts(complete_path(root, "/", "/h/secret/")) == ["/h/secret/inner"]


def test_listed_child_returning_none_is_skipped():
    class Flaky(DictDir):
        def children(self):
            return ["gone"] + super().children()

    root = DictDir("", {"d": Flaky("d", {"good": Leaf("good", 1)})})
    assert texts(complete_path(root, "/", "/d/")) == ["/d/good"]


def test_numeric_order():
    root = from_json("", {"p": {str(i): {} for i in (10, 2, 1)}})
    assert texts(complete_path(root, "/", "/p/")) == ["/p/1/", "/p/2/", "/p/10/"]
    assert texts(complete_path(root, "/", "/p/1")) == ["/p/1/", "/p/10/"]
