import pytest

from metashell.fs.paths import child_path, normalize, resolve, split, to_text


@pytest.mark.parametrize("path", ["/alpha/beta", "//alpha/beta/", "alpha///beta", "/alpha/beta//"])
def test_split_drops_empty_components(path):
    assert split(path) == ["alpha", "beta"]


def test_split_root_and_empty():
    assert split("/") == []
    assert split("") == []
    assert split("///") == []


def test_repeated_slashes_are_one():
    assert resolve("/", "//a///b/") == resolve("/", "/a/b") == ["a", "b"]


def test_absolute_ignores_cwd():
    assert resolve("/x/y", "/a/b") == ["a", "b"]


def test_relative_joins_cwd():
    assert resolve("/x/y", "a/b") == ["x", "y", "a", "b"]
    assert resolve("/", "a") == ["a"]


def test_empty_path_is_cwd():
    assert resolve("/x/y", "") == ["x", "y"]
    assert resolve("/x/y", ".") == ["x", "y"]


def test_dot_and_dotdot():
    assert resolve("/x/y", "..") == ["x"]
    assert resolve("/x/y", "../..") == []
    assert resolve("/x/y", "./z/../w/.") == ["x", "y", "w"]
    assert resolve("/", "/a/./b/../c") == ["a", "c"]


def test_dotdot_at_root_stays_at_root():
    assert resolve("/", "..") == []
    assert resolve("/", "../../..") == []
    assert resolve("/a", "../../../b") == ["b"]


def test_leading_dot_components_stripped():
    # Kafka's stripDotPathComponents cases.
    assert normalize(["..", "keep", "keep2"]) == ["keep", "keep2"]
    assert normalize([".", "keep", "keep2"]) == ["keep", "keep2"]


def test_dot_names_are_ordinary():
    assert resolve("/", ".keep") == [".keep"]
    assert resolve("/a", "..b/...") == ["a", "..b", "..."]


def test_dotdot_is_textual_even_through_files():
    # No lookups happen: /file/.. is / whatever /file is.
    assert resolve("/", "/file/..") == []


def test_cwd_is_normalized_too():
    assert resolve("//x/./y/", "z") == ["x", "y", "z"]


def test_to_text():
    assert to_text([]) == "/"
    assert to_text(["a"]) == "/a"
    assert to_text(["a", "b"]) == "/a/b"
    assert to_text(resolve("/", "//a///b/")) == "/a/b"


def test_child_path():
    assert child_path("/", "a") == "/a"
    assert child_path("/a", "b") == "/a/b"
    assert child_path("a", "b") == "a/b"
    assert child_path("a/", "b") == "a/b"
    assert child_path("/t*", "byId") == "/t*/byId"
    assert child_path(".", "x") == "./x"
