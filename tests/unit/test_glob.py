import pytest

from metashell.fs.glob import Match, compile_component, expand, is_glob, literal_name
from metashell.fs.node import DictDir, Leaf, Node, from_json


def paths_of(matches):
    return [m.path for m in matches]


@pytest.fixture
def tree():
    # The GlobVisitorTest tree.
    return from_json("", {
        "alpha": {"beta": {}, "theta": {}},
        "foo": {"a": {}, "beta": {}},
        "zeta": {},
        "zzz": {},
    })


# ---- GlobComponentTest ----

@pytest.mark.parametrize("text", ["abc", "", "foobar_123", "$blah+", "a,b", "x}y", "(a|b)", "a.b", "^$"])
def test_literals(text):
    assert compile_component(text) is None
    assert not is_glob(text)
    assert literal_name(text) == text


@pytest.mark.parametrize("text", ["*", "?", "$blah*", "foo{bar,baz}", "[ab]", "a\\*{b,c}"])
def test_globs(text):
    assert is_glob(text)


def test_star_matches_everything_including_empty():
    p = compile_component("*")
    assert p.fullmatch("")
    assert p.fullmatch("anything at all")
    assert p.fullmatch(".hidden")


def test_dollar_blah_star():
    p = compile_component("$blah*")
    assert p.fullmatch("$blah")
    assert p.fullmatch("$blahblah")
    assert not p.fullmatch("blah")
    assert not p.fullmatch("x$blah")


def test_question_mark():
    p = compile_component("b?b")
    assert p.fullmatch("bob")
    assert p.fullmatch("bib")
    assert not p.fullmatch("bic")
    assert not p.fullmatch("")
    assert not p.fullmatch("bb")


def test_braces():
    p = compile_component("foo{bar,baz}")
    assert p.fullmatch("foobar")
    assert p.fullmatch("foobaz")
    assert not p.fullmatch("foo")
    assert not p.fullmatch("foobah")
    assert not p.fullmatch("baz")


def test_regex_specials_are_escaped():
    p = compile_component("a.b+(c)*")
    assert p.fullmatch("a.b+(c)")
    assert p.fullmatch("a.b+(c)xyz")
    assert not p.fullmatch("aXb+(c)")
    assert not p.fullmatch("a.bb(c)")


# ---- character classes ----

def test_class_members():
    p = compile_component("[abc]x")
    assert [s for s in ["ax", "bx", "cx", "dx", "x", "abx"] if p.fullmatch(s)] == ["ax", "bx", "cx"]


def test_class_range():
    p = compile_component("p[0-9]")
    assert p.fullmatch("p0") and p.fullmatch("p7") and p.fullmatch("p9")
    assert not p.fullmatch("pa") and not p.fullmatch("p10")
    p = compile_component("[a-cx-z]")
    assert [c for c in "abcdwxyz" if p.fullmatch(c)] == list("abcxyz")


@pytest.mark.parametrize("text", ["[!x]", "[^x]"])
def test_class_negation(text):
    p = compile_component(text)
    assert p.fullmatch("a") and p.fullmatch("y") and p.fullmatch("^") and p.fullmatch("!")
    assert not p.fullmatch("x")
    assert not p.fullmatch("")


def test_class_negated_range():
    p = compile_component("[!0-9]*")
    assert p.fullmatch("abc")
    assert not p.fullmatch("1abc")


def test_class_bracket_first_is_member():
    p = compile_component("[]a]")
    assert p.fullmatch("]") and p.fullmatch("a")
    assert not p.fullmatch("b")
    p = compile_component("[!]]")
    assert p.fullmatch("a")
    assert not p.fullmatch("]")


def test_class_dash_at_edges_is_literal():
    p = compile_component("[-a]")
    assert p.fullmatch("-") and p.fullmatch("a") and not p.fullmatch("b")
    p = compile_component("[a-]")
    assert p.fullmatch("-") and p.fullmatch("a") and not p.fullmatch("b")


def test_class_specials_inside_are_literal():
    p = compile_component("[*?{,}\\]^]")
    for c in "*?{,}]^":
        assert p.fullmatch(c), c
    assert not p.fullmatch("a")
    p = compile_component("[\\\\]")
    assert p.fullmatch("\\")


def test_class_escaped_range_ends():
    p = compile_component("[\\!-\\#]")
    assert [c for c in "!\"#$" if p.fullmatch(c)] == list("!\"#")


# ---- escapes ----

def test_escaped_glob_chars_are_literal():
    assert compile_component("\\*") is None
    assert literal_name("\\*") == "*"
    assert literal_name("a\\?b") == "a?b"
    assert literal_name("\\[x\\]") == "[x]"
    assert literal_name("\\{a,b\\}") == "{a,b}"
    assert literal_name("a\\\\b") == "a\\b"
    assert literal_name("\\a") == "a"


def test_trailing_backslash_is_itself():
    assert compile_component("ab\\") is None
    assert literal_name("ab\\") == "ab\\"


def test_escape_within_a_glob():
    p = compile_component("a\\**")
    assert p.fullmatch("a*") and p.fullmatch("a*xyz")
    assert not p.fullmatch("abc")
    p = compile_component("{\\,,x}")
    assert p.fullmatch(",") and p.fullmatch("x")
    assert not p.fullmatch("\\")


# ---- braces ----

def test_braces_with_globs_inside():
    p = compile_component("{a*,b}")
    assert [s for s in ["a", "abc", "b", "bc", "c"] if p.fullmatch(s)] == ["a", "abc", "b"]
    p = compile_component("{[0-2],x?}")
    assert [s for s in ["0", "2", "3", "xy", "x", "xyz"] if p.fullmatch(s)] == ["0", "2", "xy"]


def test_brace_edge_cases():
    p = compile_component("a{,b}")
    assert p.fullmatch("a") and p.fullmatch("ab") and not p.fullmatch("b")
    p = compile_component("{}x")
    assert p.fullmatch("x")
    p = compile_component("{only}")
    assert p.fullmatch("only") and not p.fullmatch("")
    p = compile_component("x{a,b}y{1,2}")
    assert [s for s in ["xay1", "xby2", "xy1", "xay3"] if p.fullmatch(s)] == ["xay1", "xby2"]


def test_nested_braces_work():
    p = compile_component("{a,{b,c}d}")
    assert [s for s in ["a", "bd", "cd", "d", "b", "ad"] if p.fullmatch(s)] == ["a", "bd", "cd"]


def test_comma_and_close_brace_outside_braces_are_literal():
    p = compile_component("*,}")
    assert p.fullmatch("x,}") and not p.fullmatch("x")


# ---- malformed globs are literals ----

@pytest.mark.parametrize("text", ["{a,b", "foo{", "[abc", "[", "[]", "[!]", "a[b-", "{a,[b}", "{a,{b,c}", "[z-a]"])
def test_malformed_is_literal_as_written(text):
    assert compile_component(text) is None
    assert not is_glob(text)
    assert literal_name(text) == text


def test_malformed_glob_is_looked_up_literally():
    root = from_json("", {"[abc": 1, "{x,y": 2, "a": 3})
    assert paths_of(expand(root, "/", "[abc")) == ["/[abc"]
    assert paths_of(expand(root, "/", "/{x,y")) == ["/{x,y"]
    assert expand(root, "/", "{a,b") == []


# ---- GlobVisitorTest, working directory /foo ----

def test_visitor_star(tree):
    assert paths_of(expand(tree, "/foo", "*")) == ["/foo/a", "/foo/beta"]


def test_visitor_dotdot(tree):
    matches = expand(tree, "/foo", "..")
    assert paths_of(matches) == ["/"]
    assert matches[0].components == []
    assert matches[0].node is tree


def test_visitor_double_dotdot(tree):
    assert paths_of(expand(tree, "/foo", "../..")) == ["/"]


def test_visitor_z_glob(tree):
    assert paths_of(expand(tree, "/foo", "../z*")) == ["/zeta", "/zzz"]


def test_visitor_beta_or_theta(tree):
    assert paths_of(expand(tree, "/foo", "../*/{beta,theta}")) == ["/alpha/beta", "/alpha/theta", "/foo/beta"]


def test_visitor_absolute(tree):
    assert paths_of(expand(tree, "/foo", "/a?pha")) == ["/alpha"]


def test_visitor_not_found(tree):
    assert expand(tree, "/foo", "epsilon") == []


# ---- expand ----

def test_match_fields(tree):
    [m] = expand(tree, "/", "/alpha/theta")
    assert isinstance(m, Match)
    assert m.path == "/alpha/theta"
    assert m.components == ["alpha", "theta"]
    assert m.node is tree.child("alpha").child("theta")


def test_root_and_empty(tree):
    assert paths_of(expand(tree, "/", "/")) == ["/"]
    assert paths_of(expand(tree, "/foo", "")) == ["/foo"]
    assert paths_of(expand(tree, "/foo", ".")) == ["/foo"]
    assert paths_of(expand(tree, "/", "//alpha///beta/")) == ["/alpha/beta"]


def test_sorted_depth_first_order(tree):
    assert paths_of(expand(tree, "/", "/*/*")) == ["/alpha/beta", "/alpha/theta", "/foo/a", "/foo/beta"]
    assert paths_of(expand(tree, "/", "*")) == ["/alpha", "/foo", "/zeta", "/zzz"]


def test_braces_order_follows_children_not_pattern(tree):
    assert paths_of(expand(tree, "/", "/{zzz,alpha}")) == ["/alpha", "/zzz"]


def test_numeric_children_order():
    root = from_json("", {"p": {str(i): i for i in (10, 2, 1, 33)}})
    assert paths_of(expand(root, "/", "/p/*")) == ["/p/1", "/p/2", "/p/10", "/p/33"]
    assert paths_of(expand(root, "/", "/p/[13]*")) == ["/p/1", "/p/10", "/p/33"]


def test_new_classes_in_paths(tree):
    assert paths_of(expand(tree, "/", "/[a-f]*")) == ["/alpha", "/foo"]
    assert paths_of(expand(tree, "/", "/[!a-f]*")) == ["/zeta", "/zzz"]
    assert paths_of(expand(tree, "/", "/*/[^t]*")) == ["/alpha/beta", "/foo/a", "/foo/beta"]
    assert paths_of(expand(tree, "/", "/{a*,z?z}/{a,b*}")) == ["/alpha/beta"]
    assert paths_of(expand(tree, "/", "/{a*,f*}/{a,b*}")) == ["/alpha/beta", "/foo/a", "/foo/beta"]


def test_glob_does_not_descend_into_files():
    root = from_json("", {"f": 1, "d": {"x": 2}})
    assert paths_of(expand(root, "/", "/*/*")) == ["/d/x"]
    assert expand(root, "/", "/f/x") == []
    assert paths_of(expand(root, "/", "/f/..")) == ["/"]


def test_files_match():
    root = from_json("", {"d": {"x": 2, "y": {}}})
    matches = expand(root, "/", "/d/?")
    assert paths_of(matches) == ["/d/x", "/d/y"]
    assert matches[0].node.value() == 2


class Hidden(DictDir):
    """Lists some entries, resolves more (like finalized_<anything>)."""

    def child(self, name):
        if name.startswith("finalized_"):
            return Leaf(name, 0)
        return super().child(name)


def test_literal_resolves_unlisted_child():
    root = DictDir("", {"features": Hidden("features", {"finalized_x": Leaf("finalized_x", 1)})})
    [m] = expand(root, "/", "/features/finalized_whatever")
    assert m.path == "/features/finalized_whatever"
    assert m.node.value() == 0
    # A glob only sees the listed children.
    assert paths_of(expand(root, "/", "/features/finalized_*")) == ["/features/finalized_x"]
    assert expand(root, "/", "/features/finalized_whatever*") == []


def test_escaped_literal_resolves_child_with_glob_chars():
    root = from_json("", {"a*b": 1, "axb": 2, "{x}": 3, "[1]": 4, "1": 5})
    assert paths_of(expand(root, "/", "a\\*b")) == ["/a*b"]
    assert paths_of(expand(root, "/", "a*b")) == ["/a*b", "/axb"]
    assert paths_of(expand(root, "/", "\\{x\\}")) == ["/{x}"]
    assert paths_of(expand(root, "/", "\\[1]")) == ["/[1]"]
    assert paths_of(expand(root, "/", "[1]")) == ["/1"]


def test_cwd_components_are_literal_even_if_glob_like():
    root = from_json("", {"a*": {"x": 1}, "ab": {"x": 2}, "[q": {"y": 3}})
    assert paths_of(expand(root, "/a*", "x")) == ["/a*/x"]
    assert [m.node.value() for m in expand(root, "/a*", "x")] == [1]
    assert paths_of(expand(root, "/a*", "../ab/x")) == ["/ab/x"]
    assert paths_of(expand(root, "/[q", "*")) == ["/[q/y"]


def test_listed_child_returning_none_is_skipped():
    class Flaky(DictDir):
        def children(self):
            return ["gone"] + super().children()

    root = DictDir("", {"d": Flaky("d", {"x": Leaf("x", 1)})})
    assert paths_of(expand(root, "/", "/d/*")) == ["/d/x"]
    assert expand(root, "/", "/d/gone") == []


def test_dotdot_is_resolved_before_globbing(tree):
    # /*/.. is textually /, not "the parents of every child".
    assert paths_of(expand(tree, "/", "/*/..")) == ["/"]
    assert paths_of(expand(tree, "/foo", "../alpha/./../zeta")) == ["/zeta"]


def test_lazy_children_not_built_for_literals():
    calls = []

    class Big(Node):
        is_dir = True

        def children(self):
            calls.append("children")
            return [str(i) for i in range(1000)]

        def child(self, name):
            return Leaf(name, int(name)) if name.isdigit() and int(name) < 1000 else None

    root = DictDir("", {"big": Big("big")})
    assert paths_of(expand(root, "/", "/big/42")) == ["/big/42"]
    assert calls == []
    assert paths_of(expand(root, "/", "/big/99?")) == [f"/big/99{i}" for i in range(10)]
    assert calls == ["children"]


def test_a_literal_last_name_is_looked_up_under_each_match():
    """'/topics/*/*/data': the last name, literal, looked up in place under
    each match of the glob before it (a file, or a directory without it,
    gives nothing), in order, as a step of its own would."""
    root = from_json("", {"t": {"a": {"0": {"data": 1, "x": 2}, "1": {"x": 3}, "2": 4},
                                "b": {"0": {"data": 5}}}})
    assert paths_of(expand(root, "/", "/t/*/*/data")) == ["/t/a/0/data", "/t/b/0/data"]
    assert [m.components for m in expand(root, "/", "/t/*/*/data")] == [
        ["t", "a", "0", "data"], ["t", "b", "0", "data"]]
    assert [m.node.value() for m in expand(root, "/", "t/*/0/data")] == [1, 5]
    assert paths_of(expand(root, "/", "/t/*/nope")) == []
    assert paths_of(expand(root, "/t", "*/2")) == ["/t/a/2"]


@pytest.mark.parametrize("cwd,pattern", [
    ("/", "/*/beta"), ("/", "*/beta"), ("/alpha", "../*/beta"), ("/", "/*/*"), ("/", "/{alpha,foo}/*/x"),
    ("/", "/zeta/*/beta"), ("/", "/alpha/beta/*/a"), ("/foo", "*/a"), ("/", "/*/\\*"),
])
def test_file_groups_find_what_expand_finds(tree, cwd, pattern):
    """``*/NAME`` patterns, parent by parent (what cat asks a topic for at
    once), give the matches of :func:`expand`, in its order; any other is None."""
    from metashell.fs.glob import iter_file_groups, matches_below

    tree.child("alpha").child("beta")._entries["x"] = Leaf("x", 1)
    groups = iter_file_groups(tree, cwd, pattern)
    if pattern.endswith("/*"):   # '\*' is a literal name
        assert groups is None
        return
    got = [m for parent, name in groups for m in matches_below(parent, name)]
    want = expand(tree, cwd, pattern)
    assert [(m.path, m.components, m.node) for m in got] == [(m.path, m.components, m.node) for m in want]
