"""Properties of the reservation path and glob syntax (nexus_cli/reservations/patterns.py): the
matcher and the overlap decision agree with each other and with the paths they are asked about;
normalisation gives one form for `./`, `..`, `//` and links, and is idempotent."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nexus_cli.reservations import patterns
from nexus_cli.reservations.patterns import escape, normalise, overlap

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
CHARS = "abZ.-_"
NAME = st.text(alphabet=CHARS, min_size=1, max_size=4).filter(lambda n: n not in (".", ".."))
ATOM = st.sampled_from(["a", "b", "Z", ".", "-", "*", "?", "[ab]", "[!a]", "[a-c]", "[*]", "["])
COMPONENT = st.one_of(
    st.just("**"),
    st.lists(ATOM, min_size=1, max_size=4).map("".join).filter(lambda c: c not in (".", "..")))
GLOB = st.lists(COMPONENT, min_size=1, max_size=4).map(lambda cs: "/".join(patterns.tidy(cs)))
PATH = st.lists(NAME, min_size=1, max_size=5).map("/".join)


def matches(pattern: str, path: str) -> bool:
    return patterns.match(pattern, path)


def regex(pattern: str) -> str:
    """The syntax as a regular expression (what the matcher was before it stopped backtracking):
    the oracle the linear matcher is held to."""
    def atom(a: tuple) -> str:
        if a[0] == patterns.LIT:
            return re.escape(a[1])
        if a[0] == patterns.ANY:
            return "[^/]"
        if a[0] == patterns.STAR:
            return "[^/]*"
        body = "".join(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-"
                       f"{re.escape(chr(hi))}" for lo, hi in a[2])
        return f"[^/{body}]" if a[1] else (f"(?:(?!/)[{body}])" if body else "(?!)")

    parts = pattern.split("/")
    out = []
    for i, comp in enumerate(parts):
        last = i == len(parts) - 1
        if comp == "**":
            out.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
            continue
        out.append("".join(atom(a) for a in patterns.atoms(comp)) + ("" if last else "/"))
    return "".join(out)


@SETTINGS
@given(GLOB, PATH)
def test_the_linear_matcher_agrees_with_the_regular_expression_of_the_syntax(glob, path):
    expected = re.fullmatch(regex(glob), path, re.DOTALL) is not None
    assert matches(glob, path) == expected
    # and through the literal head/tail prefilter of a reservation's absolute match
    assert patterns.matches("/r", glob, False, f"/r/{path}") == expected


def test_matching_never_backtracks_past_the_last_star(monkeypatch):
    """`*?*?...*Z` (and `*a*a...*b`) made a backtracking matcher exponential in the name's
    length (17 s in every other session's edit hook): the walk now tries each character of the
    name against each atom of the pattern at most once per start of its last star."""
    calls = [0]
    real = patterns._char

    def counted(atom: tuple, ch: str) -> bool:
        calls[0] += 1
        return real(atom, ch)

    monkeypatch.setattr(patterns, "_char", counted)
    for glob, name in (("*?" * 10 + "*Z", "a" * 200), ("*a" * 10 + "*b", "a" * 200),
                       ("*?" * 5 + "*Z", "b" * 4000)):
        calls[0] = 0
        assert not patterns.matches("/p", f"src/{glob}", False, f"/p/src/{name}")
        size = len(patterns.atoms(glob))
        assert calls[0] <= (len(name) + 1) * (size + 1), (glob, calls[0])
    deep = "/".join(["a"] * 300)
    assert not patterns.match("**/b/**/c/**/d", deep)


def test_globs_are_bounded_and_an_overlap_has_a_budget(monkeypatch):
    """A glob with more wildcards than a component (or a pattern) may hold is refused; deciding
    whether two globs overlap stops at its budget (TooComplex) instead of holding the store's
    write lock for seconds."""
    ok = "src/" + "*a" * patterns.MAX_COMPONENT_WILDCARDS
    assert normalise(ok, "/tmp", "/tmp").pattern == ok
    for bad in ("src/" + "*a" * (patterns.MAX_COMPONENT_WILDCARDS + 1),
                "/".join(["*a*b*c*d"] * 11)):
        try:
            normalise(bad, "/tmp", "/tmp")
        except ValueError as exc:
            assert "wildcards" in str(exc)
            continue
        raise AssertionError(f"{bad!r} was accepted")
    a, b = "/p/" + "*b" * 1000, "/p/" + "*a" * 1000  # 14.6 s under the lock before the budget
    steps = patterns.budget()
    try:
        overlap(a, b, steps)
    except patterns.TooComplex:
        assert steps[0] < 0
    else:
        raise AssertionError("the overlap ran past its budget")
    assert overlap("src/**/test_*.py", "src/**/*_test.py", patterns.budget()) is not None


@SETTINGS
@given(GLOB, PATH)
def test_the_matcher_and_the_overlap_automaton_agree_on_every_file(glob, path):
    assert matches(glob, path) == (overlap(glob, escape(path)) is not None)
    assert matches(escape(path), path)


@SETTINGS
@given(GLOB, GLOB, st.lists(PATH, max_size=20))
def test_an_overlap_is_a_path_both_match_and_no_overlap_means_none(a, b, paths):
    found = overlap(a, b)
    assert (found is None) == (overlap(b, a) is None)
    if found is not None:
        assert matches(a, found) and matches(b, found), found
    else:
        assert not any(matches(a, p) and matches(b, p) for p in paths)


@SETTINGS
@given(st.lists(NAME, min_size=1, max_size=3), GLOB)
def test_a_glob_under_a_directory_matches_what_the_directory_prefix_allows(dirs, glob):
    prefix = "/".join(dirs)
    for path in ("x", "a/b", "Z.a"):
        assert matches(f"{escape(prefix)}/{glob}", f"{prefix}/{path}") == matches(glob, path)


@SETTINGS
@given(st.lists(NAME, min_size=1, max_size=4), st.sampled_from(["", "./", "x/../", "a/b/../../"]),
       st.booleans())
def test_dot_dotdot_and_doubled_slashes_name_the_same_file(tmp_path, parts, noise, doubled):
    root = str(tmp_path)
    plain = normalise("/".join(parts), root, root)
    sep = "//" if doubled else "/"
    assert normalise(noise + sep.join(parts), root, root) == plain
    assert normalise(os.path.join(root, *parts), "/", root) == plain  # absolute, same file
    assert plain.pattern == "/".join(escape(p) for p in parts) and plain.exact


@SETTINGS
@given(st.lists(NAME, max_size=2), GLOB)
def test_normalising_a_normal_form_changes_nothing(tmp_path, dirs, glob):
    root = str(tmp_path)
    first = normalise("/".join([*dirs, glob]), root, root)
    assume(first.pattern)
    assert normalise(first.pattern, root, root) == first
    assert normalise(patterns.absolute(first.root, first.pattern), "/", root) == first


def test_a_link_and_its_target_are_one_file_and_directories_cover_their_tree(tmp_path):
    root = str(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    (tmp_path / "alias").symlink_to(tmp_path / "src")
    (tmp_path / "b.py").symlink_to(tmp_path / "src" / "a.py")
    assert normalise("alias/a.py", root, root) == normalise("src/a.py", root, root)
    assert normalise("b.py", root, root).pattern == "src/a.py"
    assert normalise("alias", root, root).pattern == "src/**"
    assert normalise("new/", root, root).pattern == "new/**"  # a directory yet to be made
    assert normalise("alias/**/*.py", root, root).pattern == "src/**/*.py"
    outside = normalise("/etc/hosts", root, root)
    assert outside.root == "/etc" and outside.pattern == "hosts"


def test_case_folding_uses_one_form(tmp_path, monkeypatch):
    root = str(tmp_path)
    monkeypatch.setattr(patterns, "case_insensitive", lambda path: True)
    spec = normalise("Src/Parser.PY", root, root)
    assert spec.folded and spec.anchor == spec.anchor.lower() and spec.pattern == "Src/Parser.PY"
    assert patterns.matches(spec.root, spec.pattern, True, os.path.join(root, "src", "parser.py"))
    monkeypatch.setattr(patterns, "case_insensitive", lambda path: False)
    assert not patterns.matches(spec.root, spec.pattern, False,
                                os.path.join(root, "src", "parser.py"))


def test_the_syntax_as_documented():
    assert matches("src/**/test_*.py", "src/test_a.py")
    assert matches("src/**/test_*.py", "src/x/y/test_b.py")
    assert not matches("src/**/test_*.py", "src/x/a.py")
    assert matches("docs/**", "docs/a/b") and not matches("docs/**", "docs")
    assert matches("**", "any/thing") and matches("*", ".hidden") and not matches("*", "a/b")
    assert matches("[!a]?", "bc") and not matches("[!a]?", "ac") and not matches("?", "/")
    assert matches("a[*]b", "a*b") and not matches("a[*]b", "axb")
    assert matches("x[", "x[")  # an unclosed bracket is itself
    assert overlap("*.py", "*.md") is None and overlap("src/**", "src/*.py") is not None
    assert overlap("a/*/b", "a/b") is None
    for bad in ("src/*/../x", "a\x00b", " ", "x" * 5000):
        try:
            normalise(bad, "/tmp", "/tmp")
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
