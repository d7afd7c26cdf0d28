"""Every command on a fake tree: output, error messages, exit codes."""

from __future__ import annotations

import json

import pytest
from tests.support.commands import T0_TEXT, make_ctx

from metashell.commands import COMMANDS, run_line, run_words, unknown_command_message


@pytest.fixture
def ctx():
    return make_ctx()


def sh(ctx, line):
    """Run one line; (status, stdout, stderr) of that line alone."""
    for stream in (ctx.out, ctx.err):
        stream.seek(0)
        stream.truncate()
    status = run_line(ctx, line)
    return status, ctx.out.getvalue(), ctx.err.getvalue()


def lines(text):
    return text.splitlines()


# ------------------------------------------------------------------ registry / dispatch

def test_the_registry_lists_every_command_defined():
    """A command class written but left out of ``registry.py`` is caught."""
    import importlib
    import pkgutil

    import metashell.commands as package
    from metashell.commands.base import Command

    defined = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"metashell.commands.{info.name}")
        defined |= {c for c in vars(module).values() if isinstance(c, type) and issubclass(c, Command)
                    and c is not Command and c.__module__ == module.__name__}
    assert {type(c) for c in COMMANDS.values()} == defined


def test_registry_has_kafkas_ten_and_ours():
    assert list(COMMANDS) == ["brokers", "cat", "cd", "changes", "diff", "exit", "find", "help", "history",
                              "log", "ls", "man", "partitions", "pwd", "quorum", "summary", "tree", "watch"]
    for name, command in COMMANDS.items():
        assert command.name == name
        assert command.description and "\n" not in command.description


def test_unknown_command(ctx):
    status, out, err = sh(ctx, "blah")
    assert status == 2 and out == ""
    assert err == ("unknown command 'blah' (choose from brokers, cat, cd, changes, diff, exit, find, "
                   "help, history, log, ls, man, partitions, pwd, quorum, summary, tree, watch)\n")


@pytest.mark.parametrize("typed,guess", [("l", "'ls'"), ("lss", "'ls'"), ("tre", "'tree'"),
                                         ("ca", "'cat'"), ("hisotry", "'history'")])
def test_unknown_command_did_you_mean(typed, guess):
    message = unknown_command_message(typed)
    assert message.startswith(f"unknown command '{typed}' (choose from brokers, cat, ")
    assert message.endswith("?") and guess in message.split("did you mean", 1)[1]


def test_blank_comment_and_empty_words(ctx):
    assert sh(ctx, "") == (0, "", "")
    assert sh(ctx, "   ") == (0, "", "")
    assert sh(ctx, "# ls /nope") == (0, "", "")
    assert run_words(ctx, []) == 0
    assert run_words(ctx, ["", ""]) == 0
    # trailing empty words are dropped (Kafka): `pwd ""` is `pwd`
    assert run_words(ctx, ["pwd", ""]) == 0


def test_shlex_quotes_and_backslashes(ctx):
    status, out, _ = sh(ctx, "cat '/odd/with space'")
    assert (status, out) == (0, "spaced\n")
    status, out, _ = sh(ctx, r"cat /odd/with\ space")
    assert (status, out) == (0, "spaced\n")
    status, out, _ = sh(ctx, 'cat "/odd/with space"')
    assert (status, out) == (0, "spaced\n")


def test_unbalanced_quote_is_a_usage_error(ctx):
    status, out, err = sh(ctx, "ls 'unclosed")
    assert status == 2 and out == ""
    assert err == "syntax error: no closing quotation\n"


def test_argument_errors_are_one_line_usage_errors(ctx):
    assert sh(ctx, "ls -x") == (2, "", "ls: unrecognized arguments: -x\n")
    assert sh(ctx, "cat") == (2, "", "cat: the following arguments are required: PATH\n")
    assert sh(ctx, "history x") == (2, "", "history: argument N: invalid int value: 'x'\n")
    assert sh(ctx, "find -type x") == (
        2, "", "find: argument -type: invalid choice: 'x' (choose from 'f', 'd')\n")
    assert sh(ctx, "pwd extra") == (2, "", "pwd: unrecognized arguments: extra\n")
    assert sh(ctx, "man") == (2, "", "man: the following arguments are required: COMMAND\n")


def test_dash_h_prints_the_manual(ctx):
    status, out, err = sh(ctx, "ls -h")
    assert status == 0 and err == ""
    assert out.startswith("ls: List metadata nodes.\n\nusage: ls [-h] [-l] [PATH ...]\n")
    assert sh(ctx, "ls --help")[1] == out


def test_path_starting_with_dash_after_double_dash(ctx):
    status, _, err = sh(ctx, "ls -- -x")
    assert status == 1 and err == "ls: -x: no such file or directory\n"


# ------------------------------------------------------------------ ls

def test_ls_root_and_default_dot(ctx):
    status, out, err = sh(ctx, "ls")
    assert status == 0 and err == ""
    assert lines(out) == ["brokers", "configs", "empty", "features", "local", "odd", "quota",
                          "topics"]
    assert sh(ctx, "ls /") == (status, out, err)


def test_ls_numeric_order(ctx):
    assert lines(sh(ctx, "ls /brokers")[1]) == ["1", "2", "10"]


def test_ls_file_lists_its_name(ctx):
    assert sh(ctx, "ls /topics/foo/id") == (0, "id\n", "")


def test_ls_several_targets_headers(ctx):
    status, out, _ = sh(ctx, "ls /brokers /features")
    assert status == 0
    assert out == "/brokers:\n1\n2\n10\n\n/features:\nkraft.version\nmetadata.version\n"


def test_ls_files_first_then_directories(ctx):
    status, out, _ = sh(ctx, "ls /features /topics/foo/id /local/version")
    assert out == "id\nversion\n\n/features:\nkraft.version\nmetadata.version\n"


def test_ls_empty_directory(ctx):
    assert sh(ctx, "ls /empty") == (0, "", "")
    assert sh(ctx, "ls /empty /features")[1] == (
        "/empty:\n\n/features:\nkraft.version\nmetadata.version\n")


def test_ls_relative_and_dotdot(ctx):
    sh(ctx, "cd /topics/foo")
    assert lines(sh(ctx, "ls")[1]) == ["0", "1", "id", "name"]
    assert lines(sh(ctx, "ls ..")[1]) == ["bar", "foo"]
    assert lines(sh(ctx, "ls ../../..")[1])[0] == "brokers"
    assert sh(ctx, "ls 0")[1] == "data\n"


def test_ls_glob_header_is_resolved_path(ctx):
    status, out, _ = sh(ctx, "ls '/topics/*/0'")
    assert out == "/topics/bar/0:\ndata\n\n/topics/foo/0:\ndata\n"


def test_ls_missing(ctx):
    assert sh(ctx, "ls /topics/nope") == (1, "", "ls: /topics/nope: no such file or directory\n")
    status, out, err = sh(ctx, "ls /nope /features")
    assert status == 1
    assert err == "ls: /nope: no such file or directory\n"
    assert out == "kraft.version\nmetadata.version\n"


def test_ls_columns_to_terminal_width(ctx):
    ctx.width = 80
    status, out, _ = sh(ctx, "ls /")
    assert out == "brokers  configs  empty  features  local  odd  quota  topics\n"
    ctx.width = 30
    assert sh(ctx, "ls /")[1] == ("brokers  features  quota\n"
                                  "configs  local     topics\n"
                                  "empty    odd       \n")


def test_ls_long(ctx):
    status, out, err = sh(ctx, "ls -l /topics/foo")
    assert status == 0 and err == ""
    assert lines(out) == [
        "T  SIZE  OFFSET  LAST CHANGE               NAME",
        "d     1      21  2024-05-10T20:06:51.507Z  0",
        "d     1      22  2024-05-10T20:06:51.508Z  1",
        "-     5      20  2024-05-10T20:06:51.506Z  id",
        "-     3      20  2024-05-10T20:06:51.506Z  name",
    ]


def test_ls_long_unknown_change_and_dir_sizes(ctx):
    assert lines(sh(ctx, "ls -l /features")[1]) == [
        "T  SIZE  OFFSET  LAST CHANGE               NAME",
        "-     1       -  -                         kraft.version",
        "-     2       1  2024-05-10T20:06:51.487Z  metadata.version",
    ]
    out = sh(ctx, "ls --long /")[1]
    assert "d     3       -  -            brokers" in out and "d     0       -  -            empty" in out


def test_ls_long_size_is_text_length(ctx):
    out = sh(ctx, "ls -l /brokers/1/registration")[1]
    text = sh(ctx, "cat /brokers/1/registration")[1]
    assert out.splitlines()[1].split()[1] == str(len(text) - 1)


def test_ls_json(ctx):
    ctx.output = "json"
    assert sh(ctx, "ls /brokers") == (0, '["1","2","10"]\n', "")
    assert sh(ctx, "ls /topics/foo/id") == (0, '["id"]\n', "")
    assert sh(ctx, "ls /empty") == (0, "[]\n", "")
    assert json.loads(sh(ctx, "ls /brokers /topics/foo/id")[1]) == {
        "/brokers": ["1", "2", "10"], "/topics/foo/id": ["id"]}
    # a glob always gives the object form, whatever it matches
    assert json.loads(sh(ctx, "ls '/top*'")[1]) == {"/topics": ["bar", "foo"]}
    status, out, err = sh(ctx, "ls /nope")
    assert (status, out, err) == (1, "[]\n", "ls: /nope: no such file or directory\n")


def test_ls_long_json(ctx):
    ctx.output = "json"
    entries = json.loads(sh(ctx, "ls -l /topics/foo")[1])
    assert entries[0] == {"name": "0", "type": "dir", "size": 1, "offset": 21,
                          "time": "2024-05-10T20:06:51.507Z", "fromSnapshot": False}
    assert entries[2] == {"name": "id", "type": "file", "size": 5, "offset": 20,
                          "time": "2024-05-10T20:06:51.506Z", "fromSnapshot": False}
    assert json.loads(sh(ctx, "ls -l /features")[1])[0]["offset"] is None


def test_ls_colour_only_when_asked(ctx):
    out = sh(ctx, "ls /topics/foo")[1]
    assert "\x1b[" not in out
    ctx.color = True
    out = sh(ctx, "ls /topics/foo")[1]
    assert "\x1b[1;34m0\x1b[0m" in out and "\nid\n" in out
    assert "\x1b[1;34m0\x1b[0m" in sh(ctx, "ls -l /topics/foo")[1]


# ------------------------------------------------------------------ cat

def test_cat_scalars(ctx):
    assert sh(ctx, "cat /topics/foo/name") == (0, "foo\n", "")
    assert sh(ctx, "cat /features/metadata.version") == (0, "19\n", "")
    assert sh(ctx, "cat /brokers/2/isFenced") == (0, "true\n", "")
    assert sh(ctx, "cat /odd/nothing") == (0, "null\n", "")
    assert sh(ctx, "cat /odd/text") == (0, "line one\nline two\n", "")
    assert sh(ctx, "cat /quota/rate /quota/ratio") == (
        0, "/quota/rate:\n100000000000000000000.0\n\n/quota/ratio:\n0.5\n", "")


def test_cat_object_is_indented_json(ctx):
    status, out, _ = sh(ctx, "cat /brokers/1/registration")
    assert status == 0
    assert out == json.dumps({"brokerId": 1, "rack": None,
                              "listeners": [{"name": "PLAINTEXT", "port": 9092}]},
                             indent=2) + "\n"


def test_cat_glob_in_order(ctx):
    """Each value after the path it came from, whenever a glob or several
    PATHs are given (even if one file matches: the reader cannot know)."""
    assert sh(ctx, "cat '/topics/*/name'") == (0, "/topics/bar/name:\nbar\n\n"
                                                  "/topics/foo/name:\nfoo\n", "")
    assert sh(ctx, "cat '/topics/{foo,bar}/id'") == (0, "/topics/bar/id:\nbarId\n\n"
                                                       "/topics/foo/id:\nfooId\n", "")
    assert sh(ctx, "cat '/brokers/[12]/isFenced'") == (0, "/brokers/1/isFenced:\nfalse\n\n"
                                                         "/brokers/2/isFenced:\ntrue\n", "")
    assert sh(ctx, "cat '/topics/fo?/name'") == (0, "/topics/foo/name:\nfoo\n", "")
    out = sh(ctx, "cat '/brokers/*/registration'")[1]
    assert out.startswith("/brokers/1/registration:\n{\n") and "\n\n/brokers/2/registration:\n{" in out


def test_cat_errors(ctx):
    assert sh(ctx, "cat /topics") == (1, "", "cat: /topics: is a directory\n")
    assert sh(ctx, "cat /topics/nope") == (1, "", "cat: /topics/nope: no such file or directory\n")
    status, out, err = sh(ctx, "cat /nope /topics/foo/name")
    assert (status, out) == (1, "/topics/foo/name:\nfoo\n")
    assert err == "cat: /nope: no such file or directory\n"
    assert sh(ctx, "cat '/topics/*/0'")[2] == ("cat: /topics/bar/0: is a directory\n"
                                              "cat: /topics/foo/0: is a directory\n")


def test_cat_json_one_document_per_line(ctx):
    ctx.output = "json"
    status, out, _ = sh(ctx, "cat /topics/foo/name /features/metadata.version '/topics/*/0/data'")
    docs = [json.loads(line) for line in lines(out)]
    assert docs[:2] == ["foo", 19]
    assert [d["topicId"] for d in docs[2:]] == ["barId", "fooId"]
    assert lines(out)[2] == ('{"partitionId":0,"topicId":"barId","replicas":[1,2],"isr":[1],'
                             '"leader":1}')


def test_cat_json_with_path(ctx):
    ctx.output = "json"
    status, out, _ = sh(ctx, "cat --with-path /topics/foo/name '/topics/*/0/data'")
    docs = [json.loads(line) for line in lines(out)]
    assert [d["path"] for d in docs] == ["/topics/foo/name", "/topics/bar/0/data",
                                         "/topics/foo/0/data"]
    assert docs[0]["value"] == "foo" and docs[2]["value"]["topicId"] == "fooId"


def test_cat_colour_highlights_json(ctx):
    ctx.color = True
    out = sh(ctx, "cat /brokers/1/registration")[1]
    assert "\x1b[" in out
    assert sh(ctx, "cat /topics/foo/name")[1] == "foo\n"


# ------------------------------------------------------------------ cd / pwd

def test_cd_pwd(ctx):
    assert sh(ctx, "pwd") == (0, "/\n", "")
    assert sh(ctx, "cd topics") == (0, "", "")
    assert sh(ctx, "pwd")[1] == "/topics\n"
    sh(ctx, "cd foo/0")
    assert sh(ctx, "pwd")[1] == "/topics/foo/0\n"
    sh(ctx, "cd ../..")
    assert sh(ctx, "pwd")[1] == "/topics\n"
    sh(ctx, "cd")
    assert sh(ctx, "pwd")[1] == "/\n"
    sh(ctx, "cd ../../..")
    assert sh(ctx, "pwd")[1] == "/\n"
    sh(ctx, "cd //topics///foo/")
    assert ctx.cwd == "/topics/foo"


def test_cd_glob_and_dash(ctx):
    assert sh(ctx, "cd '/top*/f*'") == (0, "", "")
    assert ctx.cwd == "/topics/foo"
    sh(ctx, "cd /brokers")
    assert sh(ctx, "cd -") == (0, "/topics/foo\n", "")
    assert ctx.cwd == "/topics/foo"


def test_cd_errors(ctx):
    assert sh(ctx, "cd /x") == (1, "", "cd: /x: no such file or directory\n")
    assert sh(ctx, "cd /topics/foo/id") == (1, "", "cd: /topics/foo/id: not a directory\n")
    assert sh(ctx, "cd '/topics/*'") == (1, "", "cd: /topics/*: ambiguous (2 directories match)\n")
    assert ctx.cwd == "/"
    assert sh(ctx, "cd a b")[0] == 2


def test_pwd_json(ctx):
    ctx.output = "json"
    sh(ctx, "cd /topics")
    assert sh(ctx, "pwd")[1] == '"/topics"\n'


# ------------------------------------------------------------------ find

def test_find_default_is_dot_as_typed(ctx):
    sh(ctx, "cd /topics/bar")
    assert lines(sh(ctx, "find")[1]) == [".", "./0", "./0/data", "./id", "./name"]


def test_find_paths_as_typed(ctx):
    assert lines(sh(ctx, "find /brokers/1")[1]) == [
        "/brokers/1", "/brokers/1/isFenced", "/brokers/1/registration"]
    assert lines(sh(ctx, "find /")[1])[:3] == ["/", "/brokers", "/brokers/1"]
    sh(ctx, "cd /topics")
    assert lines(sh(ctx, "find bar/")[1]) == ["bar/", "bar/0", "bar/0/data", "bar/id", "bar/name"]


def test_find_glob_prints_matched_paths(ctx):
    assert lines(sh(ctx, "find '/topics/*/0'")[1]) == [
        "/topics/bar/0", "/topics/bar/0/data", "/topics/foo/0", "/topics/foo/0/data"]


def test_find_name_and_type(ctx):
    assert lines(sh(ctx, "find / -name isFenced")[1]) == [
        "/brokers/1/isFenced", "/brokers/2/isFenced", "/brokers/10/isFenced"]
    assert lines(sh(ctx, "find /topics -type d")[1]) == [
        "/topics", "/topics/bar", "/topics/bar/0", "/topics/foo", "/topics/foo/0",
        "/topics/foo/1"]
    assert lines(sh(ctx, "find -type f -name 'i*' /topics")[1]) == [
        "/topics/bar/id", "/topics/foo/id"]
    assert lines(sh(ctx, "find /features -name '*.version' -type f")[1]) == [
        "/features/kraft.version", "/features/metadata.version"]
    assert sh(ctx, "find /topics -name nothing-like-this") == (0, "", "")


def test_find_missing(ctx):
    assert sh(ctx, "find /nope") == (1, "", "find: /nope: no such file or directory\n")
    status, out, err = sh(ctx, "find /nope /empty")
    assert (status, out) == (1, "/empty\n")


def test_find_json(ctx):
    ctx.output = "json"
    assert json.loads(sh(ctx, "find /brokers/2")[1]) == [
        "/brokers/2", "/brokers/2/isFenced", "/brokers/2/registration"]
    status, out, _ = sh(ctx, "find /nope")
    assert (status, json.loads(out)) == (1, [])


# ------------------------------------------------------------------ tree

def test_tree_text(ctx):
    status, out, _ = sh(ctx, "tree /topics/bar")
    assert status == 0
    assert out == (
        "0:\n"
        "  data:\n"
        "    {\n"
        '      "partitionId": 0,\n'
        '      "topicId": "barId",\n'
        '      "replicas": [1, 2],\n'
        '      "isr": [1],\n'
        '      "leader": 1\n'
        "    }\n"
        "id:\n"
        "  barId\n"
        "name:\n"
        "  bar\n")


def test_tree_file_and_empty(ctx):
    assert sh(ctx, "tree /topics/foo/name") == (0, "foo\n", "")
    assert sh(ctx, "tree /empty") == (0, "", "")
    assert sh(ctx, "tree /odd/text")[1] == "line one\nline two\n"


def test_tree_default_is_cwd(ctx):
    sh(ctx, "cd /features")
    assert sh(ctx, "tree")[1] == "kraft.version:\n  1\nmetadata.version:\n  19\n"


def test_tree_several(ctx):
    status, out, _ = sh(ctx, "tree '/brokers/*/isFenced'")
    assert out == ("/brokers/1/isFenced:\n  false\n/brokers/2/isFenced:\n  true\n"
                   "/brokers/10/isFenced:\n  false\n")
    out = sh(ctx, "tree /features /topics/foo/id")[1]
    assert out == ("/features:\n  kraft.version:\n    1\n  metadata.version:\n    19\n"
                   "/topics/foo/id:\n  fooId\n")


def test_tree_missing(ctx):
    assert sh(ctx, "tree /nope") == (1, "", "tree: /nope: no such file or directory\n")


def test_tree_json(ctx):
    ctx.output = "json"
    assert json.loads(sh(ctx, "tree /features")[1]) == {"kraft.version": 1,
                                                        "metadata.version": 19}
    assert json.loads(sh(ctx, "tree /topics/foo/id")[1]) == "fooId"
    doc = json.loads(sh(ctx, "tree /")[1])
    assert doc["topics"]["foo"]["0"]["data"]["isr"] == [1]
    assert doc["empty"] == {}
    assert json.loads(sh(ctx, "tree '/topics/*/name'")[1]) == {
        "/topics/bar/name": "bar", "/topics/foo/name": "foo"}
    assert sh(ctx, "tree /nope")[:2] == (1, "")


# ------------------------------------------------------------------ summary / changes

def test_summary_text(ctx):
    status, out, _ = sh(ctx, "summary")
    assert status == 0
    assert lines(out) == [
        "clusterId:   -",        # none known: no meta.properties was read
        "brokers:",
        "  ids:    1, 2, 10",
        "  fenced: 2",
        "controllers: -",
        "topics:      2",
        "partitions:  3",
        "metadataVersion:",
        "  level:   19",
        "  release: 3.7-IV4",
        "features:",
        "  metadata.version: 19",
        "  kraft.version:    1",
        "lastOffset:  31",
        "lastTime:    2024-05-10T20:06:51.517Z",
    ]


def test_summary_json(ctx):
    ctx.output = "json"
    assert json.loads(sh(ctx, "summary")[1])["metadataVersion"]["release"] == "3.7-IV4"


def test_summary_and_changes_need_a_session():
    ctx = make_ctx(session=None)
    assert sh(ctx, "summary") == (1, "", "summary: not available: no metadata was loaded\n")
    assert sh(ctx, "changes /topics/foo")[0] == 1


def test_changes_text(ctx):
    status, out, _ = sh(ctx, "changes /topics/foo")
    assert status == 0
    assert lines(out) == [
        "20  2024-05-10T20:06:51.506Z  TopicRecord      topic foo created",
        "22  2024-05-10T20:06:51.508Z  PartitionRecord  partition 1 created",
    ]
    sh(ctx, "cd /topics")
    assert sh(ctx, "changes foo")[1] == out


def test_changes_several(ctx):
    out = sh(ctx, "changes '/brokers/*'")
    assert out[0] == 1   # /brokers/10 is not an entity of the fake
    assert out[1] == ("/brokers/1:\n"
                      "5  2024-05-10T20:06:51.491Z  RegisterBrokerRecord  broker 1 registered\n"
                      "\n/brokers/2:\n")
    assert out[2] == "changes: /brokers/10: no change history (not an entity)\n"


def test_changes_errors(ctx):
    assert sh(ctx, "changes /nope") == (1, "", "changes: /nope: no such file or directory\n")
    assert sh(ctx, "changes /topics") == (
        1, "", "changes: /topics: no change history (not an entity)\n")
    assert sh(ctx, "changes")[0] == 2


def test_changes_json(ctx):
    ctx.output = "json"
    assert json.loads(sh(ctx, "changes /brokers/1")[1]) == [
        {"offset": 5, "time": "2024-05-10T20:06:51.491Z", "type": "RegisterBrokerRecord",
         "summary": "broker 1 registered"}]
    assert json.loads(sh(ctx, "changes /brokers/1 /brokers/2")[1]) == {
        "/brokers/1": [{"offset": 5, "time": "2024-05-10T20:06:51.491Z",
                        "type": "RegisterBrokerRecord", "summary": "broker 1 registered"}],
        "/brokers/2": []}


# ------------------------------------------------------------------ help / man / history / exit

def test_help(ctx):
    status, out, _ = sh(ctx, "help")
    assert status == 0
    assert out.startswith("Welcome to the Apache Kafka metadata shell (metashell ")
    width = max(map(len, COMMANDS)) + 2
    for name, command in COMMANDS.items():
        assert f"  {name.ljust(width)}{command.description}\n" in out
    assert sh(ctx, "help ls")[1] == sh(ctx, "man ls")[1]
    assert sh(ctx, "help nope")[0] == 1


def test_help_json(ctx):
    ctx.output = "json"
    assert json.loads(sh(ctx, "help")[1])["ls"] == "List metadata nodes."


@pytest.mark.parametrize("name", list(COMMANDS))
def test_man_every_command(ctx, name):
    status, out, err = sh(ctx, f"man {name}")
    command = COMMANDS[name]
    assert status == 0 and err == ""
    assert out.startswith(f"{name}: {command.description}\n\nusage: {name} ")


def test_man_tree_documents_the_format(ctx):
    out = sh(ctx, "man tree")[1]
    assert "ShellNodePrinter" in out and "two spaces deeper" in out


def test_man_unknown(ctx):
    assert sh(ctx, "man blah") == (
        1, "", "man: unknown command 'blah'. Type help to get a list of commands.\n")


def test_history(ctx):
    entries = ["ls", "cd /topics", "pwd", "history 2"]
    ctx.history = lambda: entries
    assert sh(ctx, "history 2")[1] == "    2  pwd\n    3  history 2\n"
    assert sh(ctx, "history")[1] == ("    0  ls\n    1  cd /topics\n    2  pwd\n"
                                     "    3  history 2\n")
    assert sh(ctx, "history -1") == (0, "", "")
    assert sh(ctx, "history 0") == (0, "", "")
    assert sh(ctx, "history 99")[1].count("\n") == 4
    ctx.output = "json"
    assert json.loads(sh(ctx, "history 1")[1]) == ["history 2"]


def test_history_without_provider(ctx):
    assert sh(ctx, "history") == (0, "", "")


def test_exit(ctx):
    assert sh(ctx, "exit") == (0, "", "")
    assert ctx.exit_requested
    assert sh(ctx, "exit now")[0] == 2


def test_times_are_iso_utc():
    from metashell.render import iso_time, parse_time
    assert iso_time(1715371611486) == T0_TEXT
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(None) == "-"
    assert parse_time(T0_TEXT) == 1715371611486
    assert parse_time("1715371611486") == 1715371611486
    assert parse_time("2024-05-10T22:06:51.486+02:00") == 1715371611486
    assert parse_time("2024-05-10T20:06:51.486") == 1715371611486
    assert parse_time("2024-05-10") == 1715299200000
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_problems_found_later_are_reported_once():
    from tests.support.commands import FakeSession

    class Lazy(FakeSession):
        problems = ["early problem"]

        def new_problems(self, since):
            return self.problems[since:]

    session = Lazy()
    ctx = make_ctx(session=session)
    assert ctx.problems_seen == 1                 # reported with the load warnings
    assert sh(ctx, "pwd") == (0, "/\n", "")
    session.problems.append("t.log offset 9: bad partition")
    assert sh(ctx, "ls /empty") == (
        0, "", "kafka-metadata-shell: warning: t.log offset 9: bad partition\n")
    assert sh(ctx, "pwd")[2] == ""


def test_cat_reports_a_value_that_cannot_be_read(ctx):
    from metashell.errors import MetashellError
    from metashell.fs.node import Leaf

    def broken():
        raise MetashellError("x.log (byte 7, offset 3): expected a partition record")
    ctx.root.child("odd")._entries["broken"] = Leaf("broken", compute=broken)
    status, out, err = sh(ctx, "cat /odd/broken /odd/nothing")
    assert (status, out) == (1, "/odd/nothing:\nnull\n")
    assert err == "cat: /odd/broken: x.log (byte 7, offset 3): expected a partition record\n"
