"""Completion as the REPL asks for it: complete_line and split_partial."""

from __future__ import annotations

import pytest
from tests.support.commands import make_ctx

from metashell.commands import complete_line, split_partial


@pytest.fixture
def ctx():
    return make_ctx()


def cands(ctx, text):
    return complete_line(ctx, text)[1]


def test_command_names(ctx):
    assert cands(ctx, "") == ["brokers", "cat", "cd", "changes", "diff", "exit", "find", "help",
                              "history", "log", "ls", "man", "partitions", "pwd", "quorum", "summary", "tree", "watch"]
    assert cands(ctx, "c") == ["cat", "cd", "changes"]
    assert cands(ctx, "tr") == ["tree"]
    assert cands(ctx, "x") == []
    assert complete_line(ctx, "  l") == (2, ["log", "ls"])


def test_paths(ctx):
    assert complete_line(ctx, "ls /t") == (3, ["/topics/"])
    assert cands(ctx, "cat /topics/foo/") == ["/topics/foo/0/", "/topics/foo/1/",
                                              "/topics/foo/id", "/topics/foo/name"]
    assert cands(ctx, "ls ") == ["brokers/", "configs/", "empty/", "features/", "local/",
                                 "odd/", "quota/", "topics/"]
    assert cands(ctx, "tree /brokers/1") == ["/brokers/1/", "/brokers/10/"]
    assert cands(ctx, "find /nope/") == []


def test_paths_relative_to_cwd(ctx):
    ctx.cwd = "/topics"
    assert cands(ctx, "cat f") == ["foo/"]
    assert cands(ctx, "cat ../f") == ["../features/"]


def test_every_word_of_cat_ls_find_tree_completes(ctx):
    for command in ("cat", "ls", "find", "tree", "changes"):
        assert cands(ctx, f"{command} /brokers /t") == ["/topics/"], command


def test_cd_completes_directories_and_only_its_first_argument(ctx):
    assert cands(ctx, "cd /topics/foo/") == ["/topics/foo/0/", "/topics/foo/1/"]
    assert cands(ctx, "cd /topics /t") == []


def test_no_completion_for_argumentless_commands(ctx):
    for command in ("pwd", "exit", "history", "summary"):
        assert cands(ctx, f"{command} ") == [], command


def test_man_and_help_complete_command_names(ctx):
    assert cands(ctx, "man l") == ["log", "ls"]
    assert cands(ctx, "help ch") == ["changes"]
    assert cands(ctx, "man ls ") == []


def test_options(ctx):
    assert cands(ctx, "ls -") == ["--help", "--long", "-h", "-l"]
    assert cands(ctx, "ls --l") == ["--long"]
    assert cands(ctx, "find -t") == ["-type"]
    assert cands(ctx, "find / -type ") == ["f", "d"]
    assert cands(ctx, "find / -name ") == []


def test_unknown_command_offers_nothing(ctx):
    assert cands(ctx, "blah /t") == []


def test_quoting(ctx):
    assert cands(ctx, "cat /odd/w") == ["/odd/with\\ space"]
    assert complete_line(ctx, "cat '/odd/w") == (4, ["/odd/with\\ space"])
    assert complete_line(ctx, "cat /odd/with\\ ") == (4, ["/odd/with\\ space"])


def test_split_partial():
    assert split_partial("") == ([""], 0)
    assert split_partial("ls") == (["ls"], 0)
    assert split_partial("ls ") == (["ls", ""], 3)
    assert split_partial("ls  /a") == (["ls", "/a"], 4)
    assert split_partial("cat 'a b") == (["cat", "a b"], 4)
    assert split_partial('cat "a\\"b') == (["cat", 'a"b'], 4)
    assert split_partial("cat a\\ b") == (["cat", "a b"], 4)
