"""Which files a shell command visibly writes: what the edit check reads from an agent's shell
tool call (Claude Code's Bash, Codex's shell tool, both reported to PreToolUse as `Bash`).

The command is read as bash reads it (quotes, escapes, `$VAR` and `${VAR}`, `$(...)` and
backquotes, heredocs, comments, `;` `&&` `||` `|` `&` newlines, `( )` subshells) and followed
command by command, keeping what bash keeps: the current directory (`cd`, `pushd`, `popd`, and
`env -C DIR`, `bash -c "cd DIR && ..."`, which run a command elsewhere), and the variables the
command itself sets (`D=src; cd $D`). What counts as a write:
- a redirection (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&FILE`) onto the file;
- `tee`, `sed -i`, `perl -i`, `gawk -i inplace`, `sort -o`, `dd of=`, `sponge`, `truncate`,
  `touch`, `rm`, `unlink`, `shred`; `cp`, `install`, `ln`, `rsync` onto the file (into a
  directory: the file of that name there), `mv` from or onto it; `patch`; `apply_patch` (the
  files its patch names); the usual editors (`vi`, `vim`, `nvim`, `ex`, `ed`, `emacs`, `nano`,
  ...) given the file, interactive or not;
- any of these behind `sudo`, `env`, `nice`, `nohup`, `time`, `timeout`, `command`, `exec`,
  `xargs`, `find -exec`, or inside `bash -c`, `sh -c`, `eval` and `$(...)`.
Fail closed: a target nexus cannot know (`> "$F"` with F set elsewhere, `cd "$(...)"`, a loop's
variable, `find src -delete`, `xargs sed -i`) is a write somewhere under the deepest directory
that is known (`src/` for `src/$F`, else the current one): refused when anything there is held.
A command whose quoting cannot be read at all counts as writing its whole directory. What is not
seen: a program writing the file itself (a compiled program, a script, `python -c`, `git`, a
build tool): the commit guard (`nexus guard`, `install-git-hook`) is the net there.

Stdlib only (the hook path): no shlex, whose tokens lose the quoting a variable's expansion
depends on."""

from __future__ import annotations

import os

from . import patchnames

LIT, RAW, VAR, SUB, UNKNOWN = range(5)  # a word's pieces: quoted text, unquoted text, ...
OPS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
REDIRS = ("&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<>", "<<", ">", "<")
WRITING = ("&>>", "&>", ">>", ">|", "<>", ">")
MAX_DEPTH = 8  # bash -c inside bash -c ...: deeper is read as writing the current directory
MAX_TARGETS = 200  # more exact files than this: the rest count as their directories
MAX_TEXT = 200_000  # a longer command is not read (its directory counts as written)


class Unreadable(Exception):
    """Quoting or nesting that cannot be read (bash would refuse it, or nexus misreads it)."""


# -- reading: text -> tokens -----------------------------------------------------------------


def lex(text: str) -> tuple[list[tuple], list[str]]:
    """(tokens, heredoc bodies in order). A token is ("w", pieces), ("op", text) or
    ("redir", text); a word's pieces are (kind, text)."""
    tokens: list[tuple] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []  # heredoc delimiters whose bodies start at the newline
    word: list[tuple[int, str]] | None = None
    delim: bool | None = None  # the next word is a heredoc's delimiter (True: `<<-`)
    i, n = 0, len(text)

    def end() -> None:
        nonlocal word, delim
        if word is None:
            return
        tokens.append(("w", word))
        if delim is not None:
            pending.append(("".join(t for _, t in word), delim))
            delim = None
        word = None

    def add(kind: int, piece: str) -> None:
        nonlocal word
        if word is None:
            word = []
        word.append((kind, piece))

    while i < n:
        c = text[i]
        if c in " \t\r":
            end()
            i += 1
        elif c == "\n":
            end()
            tokens.append(("op", ";"))
            i += 1
            for mark, strip in pending:
                i = _body(text, i, mark, strip, bodies)
            pending.clear()
        elif c == "#" and word is None:
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\\":
            if text[i + 1:i + 2] != "\n":
                add(LIT, text[i + 1:i + 2])
            i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise Unreadable("an unclosed quote")
            add(LIT, text[i + 1:j])
            i = j + 1
        elif c == '"':
            i = _dquoted(text, i + 1, add)
        elif c == "$":
            i = _dollar(text, i, add)
        elif c == "`":
            j = _backquote(text, i)
            add(SUB, text[i + 1:j])
            i = j + 1
        elif c in "<>" and text[i + 1:i + 2] == "(":  # process substitution: a word
            j = _closing(text, i + 2)
            add(SUB, text[i + 2:j])
            i = j + 1
        elif c in "<>&|;()":
            redir = next((r for r in REDIRS if text.startswith(r, i)), None)
            if redir is not None:
                if word is not None and len(word) == 1 and word[0][0] == RAW and \
                        word[0][1].isdigit():
                    word = None  # `2>`: a descriptor's number, not a word
                end()
                tokens.append(("redir", redir))
                if redir in ("<<", "<<-"):
                    delim = redir == "<<-"
                i += len(redir)
            else:
                end()
                op = next(o for o in OPS if text.startswith(o, i))
                tokens.append(("op", op))
                i += len(op)
        else:
            j = i
            while j < n and text[j] not in " \t\r\n\\'\"$`<>&|;()":
                j += 1
            add(RAW, text[i:j])
            i = j
    end()
    return tokens, bodies


def _body(text: str, i: int, mark: str, strip: bool, bodies: list[str]) -> int:
    """Read one heredoc's body from text[i]: up to its delimiter line (or the end)."""
    lines = []
    while i < len(text):
        j = text.find("\n", i)
        j = len(text) if j < 0 else j
        line = text[i:j]
        i = j + 1
        if (line.lstrip("\t") if strip else line) == mark:
            break
        lines.append(line)
    bodies.append("\n".join(lines) + "\n")
    return min(i, len(text))


def _dquoted(text: str, i: int, add) -> int:
    """The inside of a double-quoted string from text[i]; the index after its closing quote."""
    n = len(text)
    start = i
    while i < n:
        c = text[i]
        if c == '"':
            add(LIT, text[start:i])
            return i + 1
        if c == "\\" and text[i + 1:i + 2] in ('"', "\\", "$", "`", "\n"):
            add(LIT, text[start:i])
            if text[i + 1] != "\n":
                add(LIT, text[i + 1])
            i += 2
            start = i
        elif c == "$" or c == "`":
            add(LIT, text[start:i])
            if c == "$":
                i = _dollar(text, i, add)
            else:
                j = _backquote(text, i)
                add(SUB, text[i + 1:j])
                i = j + 1
            start = i
        else:
            i += 1
    raise Unreadable("an unclosed quote")


def _dollar(text: str, i: int, add) -> int:
    """An expansion starting with the `$` at text[i]; the index after it."""
    nxt = text[i + 1:i + 2]
    if text.startswith("$((", i):
        j = _closing(text, i + 2)
        add(UNKNOWN, "")
        return j + 1
    if nxt == "(":
        j = _closing(text, i + 2)
        add(SUB, text[i + 2:j])
        return j + 1
    if nxt == "{":
        j = text.find("}", i + 2)
        if j < 0:
            raise Unreadable("an unclosed ${")
        inner = text[i + 2:j]
        add(VAR, inner) if _name(inner) else add(UNKNOWN, "")
        return j + 1
    if nxt == "'":
        j = i + 2
        while j < len(text) and text[j] != "'":
            j += 2 if text[j] == "\\" else 1
        if j >= len(text):
            raise Unreadable("an unclosed quote")
        inner = text[i + 2:j]
        add(UNKNOWN, "") if "\\" in inner else add(LIT, inner)
        return j + 1
    if nxt == '"':
        return _dquoted(text, i + 2, add)
    j = i + 1
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if j > i + 1 and not text[i + 1].isdigit():
        add(VAR, text[i + 1:j])
        return j
    if nxt and nxt in "0123456789@*#?$!-":
        add(UNKNOWN, "")
        return i + 2
    add(LIT, "$")
    return i + 1


def _name(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and \
        all(ch.isalnum() or ch == "_" for ch in text)


def _backquote(text: str, i: int) -> int:
    j = i + 1
    while j < len(text) and text[j] != "`":
        j += 2 if text[j] == "\\" else 1
    if j >= len(text):
        raise Unreadable("an unclosed backquote")
    return j


def _closing(text: str, i: int) -> int:
    """The index of the `)` closing a `(` just before text[i] (quotes and nesting followed)."""
    depth = 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise Unreadable("an unclosed quote")
            i = j + 1
            continue
        if c == '"':
            i = _dquoted(text, i + 1, lambda kind, piece: None)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unreadable("an unclosed (")


# -- following: tokens -> writes -------------------------------------------------------------

Word = list  # of (kind, text)


def unknown_under(path: str) -> Word:
    return [(LIT, path.rstrip("/") + "/"), (UNKNOWN, "")]


class Shell:
    """The state bash keeps while it runs the command: the directories it could be in (a pair
    (path, known): known False is some directory under path), its variables (None: set to
    something nexus cannot know) and pushd's stack; and the writes found so far (shared by
    every subshell)."""

    def __init__(self, cwd: str, out: list[tuple[str, bool]], depth: int = 0,
                 done: set | None = None) -> None:
        self.places: list[tuple[str, bool]] = [(cwd, True)]
        self.vars: dict[str, str | None] = {}
        self.stack: list[list[tuple[str, bool]]] = []
        self.out = out
        self.depth = depth
        self.piped: str | None = None  # what the command before a `|` writes, when known
        self.done = set() if done is None else done  # substitutions followed (once each)

    def fork(self) -> Shell:
        child = Shell("", self.out, self.depth + 1, self.done)
        child.places, child.vars, child.stack = list(self.places), dict(self.vars), \
            list(self.stack)
        return child

    def state(self) -> tuple:
        return list(self.places), dict(self.vars), list(self.stack)

    def restore(self, state: tuple) -> None:
        self.places, self.vars, self.stack = state

    # -- the text ---------------------------------------------------------------------------

    def run(self, text: str) -> None:
        if self.depth > MAX_DEPTH or len(text) > MAX_TEXT:
            return self.everywhere()
        try:
            tokens, bodies = lex(text)
        except Unreadable:
            return self.everywhere()
        self.tokens(tokens, iter(bodies))

    def everywhere(self) -> None:
        """What cannot be read writes anywhere under the directories it could be in."""
        for base, _ in self.places:
            self.out.append((base, True))

    def tokens(self, tokens: list[tuple], bodies) -> None:
        saved: list[tuple] = []
        words: list[Word] = []
        redirs: list[tuple[str, Word | None, str | None]] = []
        before = ";"
        i = 0
        while i < len(tokens):
            kind, value = tokens[i]
            if kind == "w":
                words.append(value)
            elif kind == "redir":
                target = tokens[i + 1][1] if i + 1 < len(tokens) and tokens[i + 1][0] == "w" \
                    else None
                i += target is not None
                body = next(bodies, None) if value in ("<<", "<<-") else None
                redirs.append((value, target, body))
            else:
                if words or redirs:
                    self.finish(words, redirs, before, value)
                    words, redirs = [], []
                if value == "(":
                    saved.append(self.state())
                elif value == ")" and saved:
                    self.restore(saved.pop())
                before = value if value not in "()" else ";"
            i += 1
        if words or redirs:
            self.finish(words, redirs, before, ";")

    def finish(self, words: list[Word], redirs: list, before: str, after: str) -> None:
        """One simple command; one of a pipeline, or in the background, runs in a subshell."""
        piped, self.piped = (self.piped if before in ("|", "|&") else None), None
        if before in ("|", "|&") or after in ("|", "|&", "&"):
            state = self.state()
            self.simple(words, redirs, piped)
            self.restore(state)
        else:
            self.simple(words, redirs, piped)

    # -- expansion --------------------------------------------------------------------------

    def expand(self, word: Word) -> tuple[str, bool]:
        """(the text, whether it is known); unknown: the text known before the first piece that
        is not (a command substitution's own writes are followed on the way)."""
        out: list[str] = []
        known = True
        for i, (kind, text) in enumerate(word):
            if kind == SUB:
                key = (text, tuple(self.places), tuple(self.vars.items()))
                if key not in self.done:
                    self.done.add(key)
                    self.fork().run(text)
            if not known:
                continue
            if kind == RAW and i == 0 and text.startswith("~"):
                head, sep, rest = text.partition("/")
                home = os.path.expanduser(head)
                if home == head:  # `~user` of nobody: bash keeps it
                    out.append(text)
                else:
                    out.append(home + sep + rest)
            elif kind == RAW and "{" in text and ("," in text or ".." in text):
                out.append(text[:text.index("{")])  # a brace expansion: many names
                known = False
            elif kind in (LIT, RAW):
                out.append(text)
            elif kind == VAR and self.var(text) is not None:
                out.append(self.var(text) or "")
            else:
                known = False
        return "".join(out), known

    def var(self, name: str) -> str | None:
        if name in self.vars:
            return self.vars[name]
        if name == "HOME":
            return os.path.expanduser("~")
        if name == "PWD" and len(self.places) == 1 and self.places[0][1]:
            return self.places[0][0]
        return None

    def text(self, word: Word) -> str | None:
        value, known = self.expand(word)
        return value if known else None

    def globbed(self, word: Word) -> bool:
        return any(kind == RAW and any(ch in text for ch in "*?[") for kind, text in word)

    # -- writes -----------------------------------------------------------------------------

    def target(self, word: Word, tree: bool = False) -> None:
        """The file a word names is written (`tree`: anything under it)."""
        value, known = self.expand(word)
        globbed = self.globbed(word)
        for base, exact in self.places:
            if not known or (globbed and not exact):
                cut = min((value.index(ch) for ch in "*?[" if ch in value), default=len(value))
                head = value[:cut]
                where = head if head.endswith("/") else os.path.dirname(head)
                self.out.append((os.path.join(base, where) if exact or os.path.isabs(where)
                                 else base, True))
                continue
            if not exact and not os.path.isabs(value):
                self.out.append((base, True))
                continue
            path = os.path.join(base, value)
            if globbed:
                import glob

                found = glob.glob(path)
                if found:
                    self.out.extend((f, tree) for f in found)
                    continue
            self.out.append((path, tree))

    def targets(self, words: list[Word]) -> None:
        for w in words:
            self.target(w)

    # -- one simple command -----------------------------------------------------------------

    def simple(self, words: list[Word], redirs: list, stdin: str | None = None) -> None:
        for op, word, body in redirs:
            if word is None:
                continue
            if op in WRITING:
                self.target(word)
            elif op == ">&" and (self.text(word) or "x").strip("0123456789-"):
                self.target(word)  # `>&FILE`, not `>&2`
            elif op in ("<<", "<<-"):
                stdin = body
            elif op == "<<<":
                stdin = self.text(word)
        i = 0
        while i < len(words) and assignment(words[i]):
            i += 1
        if i == len(words):
            for w in words:
                self.assign(w)
            return
        self.command(words[i:], stdin)
        self.piped = self.output(words[i:], stdin)

    def output(self, words: list[Word], stdin: str | None) -> str | None:
        """What a command writes to a pipe, where that is plain: `cat` of its heredoc,
        `echo` and `printf` of their words (`cat <<'EOF' | apply_patch`)."""
        name = os.path.basename(self.text(words[0]) or "")
        if name == "cat" and len(words) == 1:
            return stdin
        texts = [self.text(w) for w in words[1:]]
        if name in ("echo", "printf") and all(t is not None for t in texts):
            text = "\n".join(t for t in texts if t is not None) + "\n"
            return text.replace("\\n", "\n") if name == "printf" or "-e" in texts else text
        return None

    def assign(self, word: Word) -> None:
        first = word[0][1]
        name, _, rest = first.partition("=")
        value = self.text([(LIT, rest), *word[1:]])
        self.vars[name.rstrip("+")] = value if not name.endswith("+") else None

    def command(self, words: list[Word], stdin: str | None) -> None:
        name = self.text(words[0])
        if name is None:
            for w in words:  # the command is unknown: its substitutions still run
                self.expand(w)
            return
        name = os.path.basename(name)
        args = words[1:]
        if name in RESERVED:
            if args:
                self.command(args, stdin)
            return
        handler = COMMANDS.get(name)
        if handler is not None:
            handler(self, args, stdin)
        else:
            for w in args:
                self.expand(w)

    # -- directories ------------------------------------------------------------------------

    def cd(self, word: Word | None) -> None:
        value, known = self.expand(word) if word is not None else (os.path.expanduser("~"), True)
        if known and value == "-":
            before = self.vars.get("OLDPWD")
            value, known = (before, True) if before else (".", False)
        if known:
            value = os.path.expanduser(value)
        self.vars["OLDPWD"] = self.places[0][0] if self.places[0][1] else None
        places: list[tuple[str, bool]] = []
        for base, exact in self.places:
            if known and os.path.isabs(value):
                new = (os.path.normpath(value), True)
            elif known and exact:
                new = (os.path.normpath(os.path.join(base, value)), True)
            elif known:
                new = (base, False)
            else:
                head = value if value.endswith("/") else os.path.dirname(value)
                new = (os.path.normpath(os.path.join(base, head)) if exact or
                       os.path.isabs(head) else base, False)
            if not new[1] or os.path.isdir(new[0]):
                places.append(new)
            else:  # not there now: the cd may fail (or follow a mkdir): either place
                places += [(base, exact), new]
        self.places = list(dict.fromkeys(places))


def assignment(word: Word) -> bool:
    kind, text = word[0]
    name, eq, _ = text.partition("=")
    return kind == RAW and bool(eq) and _name(name.rstrip("+"))


def options(args: list[Word], shell: Shell, takes: str = "", long_takes: tuple = (),
            command: bool = False) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Split arguments into (options with their values, operands). `takes`: the short options
    that take a value (attached or the next word); `long_takes`: long ones (`--x=v`, `--x v`);
    `command`: the first operand starts a command (all after it are operands)."""
    opts: list[tuple[str, Word | None]] = []
    operands: list[Word] = []
    i = 0
    while i < len(args):
        text = shell.text(args[i])
        if text == "--":
            operands += args[i + 1:]
            break
        if text is None or not text.startswith("-") or text == "-":
            if command:
                operands += args[i:]
                break
            operands.append(args[i])
        elif text.startswith("--"):
            key, eq, value = text.partition("=")
            if eq:
                opts.append((key, [(LIT, value)]))
            elif key in long_takes and i + 1 < len(args):
                i += 1
                opts.append((key, args[i]))
            else:
                opts.append((key, None))
        else:
            for j, ch in enumerate(text[1:], 1):
                if ch in takes:
                    if text[j + 1:]:
                        opts.append(("-" + ch, [(LIT, text[j + 1:])]))
                    elif i + 1 < len(args):
                        i += 1
                        opts.append(("-" + ch, args[i]))
                    else:
                        opts.append(("-" + ch, None))
                    break
                opts.append(("-" + ch, None))
        i += 1
    return opts, operands


def value(opts: list[tuple[str, Word | None]], *keys: str) -> list[Word]:
    return [v for k, v in opts if k in keys and v is not None]


# -- the commands ----------------------------------------------------------------------------


def _cd(sh: Shell, args: list[Word], stdin: str | None) -> None:
    _, operands = options(args, sh)
    sh.cd(operands[0] if operands else None)


def _pushd(sh: Shell, args: list[Word], stdin: str | None) -> None:
    _, operands = options(args, sh)
    before = list(sh.places)
    if operands and (sh.text(operands[0]) or "x")[0] not in "+-":
        sh.cd(operands[0])
        sh.stack.append(before)


def _popd(sh: Shell, args: list[Word], stdin: str | None) -> None:
    if sh.stack:
        sh.places = sh.stack.pop()


def _set(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """export, declare, local, readonly, typeset: their NAME=VALUE words set variables."""
    for w in args:
        if assignment(w):
            sh.assign(w)


def _unset(sh: Shell, args: list[Word], stdin: str | None) -> None:
    for w in args:
        name = sh.text(w)
        if name:
            sh.vars[name] = None


def _for(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """`for NAME in ...` and `read NAME...`: the variables take values nexus cannot know."""
    for w in args:
        name = sh.text(w)
        if name and _name(name):
            sh.vars[name] = None
        if name == "in":
            break


def _shell(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """bash/sh/zsh -c TEXT (or a script on stdin): the text run as a command of its own."""
    opts, operands = options(args, sh, takes="oO", long_takes=("--rcfile", "--init-file"))
    if any(k == "-c" for k, _ in opts):
        if operands:
            text = sh.text(operands[0])
            sh.fork().run(text) if text is not None else sh.fork().everywhere()
    elif not operands and stdin is not None:
        sh.fork().run(stdin)


def _eval(sh: Shell, args: list[Word], stdin: str | None) -> None:
    texts = [sh.text(w) for w in args]
    if any(t is None for t in texts):
        sh.everywhere()
    else:
        sh.run(" ".join(t for t in texts if t is not None))


def wrapped(takes: str = "", long_takes: tuple = (), first: int = 0):
    """A command that runs the command after its options (and `first` more words)."""
    def run(sh: Shell, args: list[Word], stdin: str | None) -> None:
        i = 0
        while i < len(args):
            text = sh.text(args[i])
            if text is None or not text.startswith("-") or text == "-":
                break
            if text == "--":
                i += 1
                break
            if (text[1:2] in takes and len(text) == 2) or text in long_takes:
                i += 1
            i += 1
        rest = args[i + first:]
        if rest:
            sh.command(rest, stdin)
    return run


def _env(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... COMMAND: the command, in DIR."""
    child = sh.fork()
    i = 0
    while i < len(args):
        text = sh.text(args[i])
        if text is None:
            break
        if text in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string") and \
                i + 1 < len(args):
            if text in ("-C", "--chdir"):
                child.cd(args[i + 1])
            elif text in ("-S", "--split-string"):
                split = sh.text(args[i + 1])
                rest = " ".join(t or "" for t in map(sh.text, args[i + 2:]))
                child.run(f"{split} {rest}") if split is not None else child.everywhere()
                return
            i += 2
            continue
        if text.startswith(("--chdir=", "-C")) and text not in ("-C",):
            child.cd([(LIT, text.partition("=")[2] if text.startswith("--") else text[2:])])
        elif text == "--":
            i += 1
            break
        elif not text.startswith("-") and not assignment(args[i]):
            break
        i += 1
    if i < len(args):
        child.command(args[i:], stdin)


def _xargs(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """xargs COMMAND ARGS: the command, given names nexus cannot know (under the directory)."""
    opts, operands = options(args, sh, takes="adEeIiLlnPs",
                             long_takes=("--arg-file", "--delimiter", "--max-args",
                                         "--max-procs", "--replace", "--max-lines"),
                             command=True)
    if not operands:
        return
    marks = [sh.text(v) or "{}" for v in value(opts, "-I", "-i", "--replace")] + \
        (["{}"] if any(k in ("-i", "--replace") for k, _ in opts) else [])
    unknown = unknown_under(".")
    rest = [unknown if any(m in (sh.text(w) or "") for m in marks) else w for w in operands]
    sh.command(rest if rest != operands else [*rest, unknown], stdin)  # -I: no names appended


def _find(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """find PATH... -exec CMD {} ; / -delete / -fprint FILE: CMD given files under PATH."""
    starts: list[Word] = []
    i = 0
    while i < len(args) and (sh.text(args[i]) or "x")[0] not in "-(!":
        starts.append(args[i])
        i += 1
    roots = [sh.text(w) for w in starts] or ["."]
    while i < len(args):
        text = sh.text(args[i]) or ""
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and sh.text(args[j]) not in (";", "+"):
                j += 1
            for r in roots:
                given = [(UNKNOWN, "")] if r is None else unknown_under(r)
                cmd = [given if "{}" in (sh.text(w) or "") else w for w in args[i + 1:j]]
                if cmd:
                    sh.command(cmd, None)
            i = j
        elif text == "-delete":
            for r in roots:
                sh.target(unknown_under(r) if r is not None else [(UNKNOWN, "")])
        elif text in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            sh.target(args[i + 1])
            i += 1
        i += 1


def _tee(sh: Shell, args: list[Word], stdin: str | None) -> None:
    sh.targets(options(args, sh)[1])


def _operands(takes: str = "", long_takes: tuple = ()):
    """A command that writes each of its operands (rm, touch, truncate, editors ...)."""
    def run(sh: Shell, args: list[Word], stdin: str | None) -> None:
        opts, operands = options(args, sh, takes, long_takes)
        tree = any(k in ("-r", "-R", "--recursive") for k, _ in opts)  # rm -r: all below
        for w in operands:
            if not (sh.text(w) or "x").startswith("+"):
                sh.target(w, tree)
        sh.targets(value(opts, "--file", "--visit"))
    return run


def _sed(sh: Shell, args: list[Word], stdin: str | None) -> None:
    opts, operands = options(args, sh, takes="efl", long_takes=("--expression", "--file",
                                                                "--line-length"))
    if any(k.startswith("--in-place") for k, _ in opts) or _inplace(sh, args):
        scripted = any(k in ("-e", "-f", "--expression", "--file") for k, _ in opts)
        sh.targets(operands if scripted else operands[1:])


def _inplace(sh: Shell, args: list[Word]) -> bool:
    """`-i`, `-i.bak`, `-Ei`, `-ni`: an -i in a cluster of sed's short options (a suffix may
    follow it)."""
    for w in args:
        text = sh.text(w) or ""
        if text.startswith("-") and not text.startswith("--"):
            for ch in text[1:]:
                if ch in "efl":
                    break
                if ch == "i":
                    return True
    return False


def _perl(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """perl -i / -pi -e SCRIPT FILES: the files (ruby -i too)."""
    inplace = scripted = False
    i = 0
    operands: list[Word] = []
    while i < len(args):
        text = sh.text(args[i]) or ""
        if text == "--":
            operands += args[i + 1:]
            break
        if text.startswith("-") and len(text) > 1 and not operands:
            for j, ch in enumerate(text[1:], 1):
                if ch == "i":
                    inplace = True
                    break
                if ch in "eE":
                    scripted = True
                    if j == len(text) - 1:
                        i += 1
                    break
                if ch in "IMmlx0CdD":
                    break
        else:
            operands.append(args[i])
        i += 1
    if inplace:
        sh.targets(operands if scripted else operands[1:])


def _awk(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """gawk -i inplace PROGRAM FILES: the files."""
    opts, operands = options(args, sh, takes="fvFiEl",
                             long_takes=("--file", "--assign", "--field-separator",
                                         "--include", "--load"))
    if not any(sh.text(v) == "inplace" for v in value(opts, "-i", "--include")):
        return
    scripted = any(k in ("-f", "--file", "-E") for k, _ in opts)
    files = operands if scripted else operands[1:]
    sh.targets([w for w in files if "=" not in (sh.text(w) or "")])


def _sort(sh: Shell, args: list[Word], stdin: str | None) -> None:
    opts, _ = options(args, sh, takes="kotST", long_takes=("--output", "--key"))
    sh.targets(value(opts, "-o", "--output"))


def _dd(sh: Shell, args: list[Word], stdin: str | None) -> None:
    for w in args:
        if w[0][0] in (LIT, RAW) and w[0][1].startswith("of="):
            sh.target([(w[0][0], w[0][1][3:]), *w[1:]])


def _copy(moves: bool, takes: str = "St", long_takes: tuple = ("--target-directory",
                                                                "--suffix")):
    """cp, mv, install, ln, rsync: onto DEST, or into it when it is a directory."""
    def run(sh: Shell, args: list[Word], stdin: str | None) -> None:
        opts, operands = options(args, sh, takes, long_takes)
        keys = {k for k, _ in opts}
        into = value(opts, "-t", "--target-directory")
        if into:
            dest, sources = into[0], operands
        elif len(operands) >= 2:
            dest, sources = operands[-1], operands[:-1]
        else:
            return
        if moves:
            sh.targets(sources)
        tree = bool(keys & {"-r", "-R", "-a", "--recursive", "--archive"})
        name = sh.text(dest)
        directory = bool(into) or len(sources) > 1 or name is None or name.endswith("/") or \
            any(os.path.isdir(os.path.join(base, name)) for base, _ in sh.places) or \
            "-T" in keys
        if not directory or "-T" in keys or "--no-target-directory" in keys:
            sh.target(dest, tree)
            return
        for src in sources:
            text = sh.text(src)
            if text is None:
                sh.target([*dest, (LIT, "/"), (UNKNOWN, "")])
            else:
                sh.target([*dest, (LIT, "/" + os.path.basename(text.rstrip("/")))], tree)
    return run


def _patch(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """patch [FILE [PATCHFILE]] (-o OUT, -d DIR): the file; without one, those the patch names,
    which nexus does not read: anything under the directory."""
    opts, operands = options(args, sh, takes="BDFVYzdgiopr",
                             long_takes=("--directory", "--input", "--output", "--strip"))
    child = sh.fork()
    for d in value(opts, "-d", "--directory"):
        child.cd(d)
    out = value(opts, "-o", "--output")
    if out:
        child.targets(out)
    elif operands:
        child.target(operands[0])
    else:
        child.everywhere()


def _apply_patch(sh: Shell, args: list[Word], stdin: str | None) -> None:
    """apply_patch (Codex puts it on its shell's PATH): the files its patch's headers name,
    from the directory it runs in. The patch: its heredoc or here-string, or its argument."""
    text = stdin if stdin is not None else sh.text(args[0]) if args else None
    if text is None:
        sh.everywhere()
        return
    for name in patchnames.headers(text):
        sh.target([(LIT, name)])


RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
            "time", "esac", "function", "coproc"}
EDITOR = _operands(takes="cSuUiTwWtq", long_takes=("--cmd", "--eval", "--load", "--funcall",
                                                     "--insert", "--directory", "--file",
                                                     "--visit"))
COMMANDS = {
    "cd": _cd, "pushd": _pushd, "popd": _popd,
    "export": _set, "declare": _set, "local": _set, "readonly": _set, "typeset": _set,
    "unset": _unset, "for": _for, "select": _for, "read": _for, "case": lambda *a: None,
    "bash": _shell, "sh": _shell, "zsh": _shell, "dash": _shell, "ksh": _shell, "mksh": _shell,
    "eval": _eval, "env": _env, "xargs": _xargs, "find": _find,
    "sudo": wrapped("ugpChUrtTD", ("--user", "--group", "--chdir")), "doas": wrapped("uC"),
    "nice": wrapped("n", ("--adjustment",)), "nohup": wrapped(), "command": wrapped(),
    "exec": wrapped("a"), "builtin": wrapped(), "setsid": wrapped(), "stdbuf": wrapped("ioe"),
    "ionice": wrapped("cnpP"), "timeout": wrapped("sk", ("--signal", "--kill-after"), first=1),
    "tee": _tee, "sponge": _tee, "sed": _sed, "gsed": _sed, "perl": _perl, "ruby": _perl,
    "awk": _awk, "gawk": _awk, "sort": _sort, "dd": _dd,
    "rm": _operands(), "unlink": _operands(), "shred": _operands("ns"),
    "truncate": _operands("sr", ("--size", "--reference")),
    "touch": _operands("rdt", ("--reference", "--date")),
    "cp": _copy(False), "mv": _copy(True), "install": _copy(False, "StgmoC"),
    "ln": _copy(False), "rsync": _copy(False, "eBfT"), "patch": _patch,
    "apply_patch": _apply_patch, "applypatch": _apply_patch,
    "vi": EDITOR, "vim": EDITOR, "nvim": EDITOR, "ex": EDITOR, "ed": _operands("p"),
    "red": _operands("p"), "emacs": EDITOR, "nano": _operands("oYTrCQX"), "pico": EDITOR,
    "micro": EDITOR, "joe": EDITOR, "kak": _operands("cesE"), "mg": EDITOR,
}


def writes(command: object, cwd: str) -> list[tuple[str, bool]]:
    """The files a shell tool's command writes, run in `cwd` (absolute): (path, tree) pairs,
    `tree` meaning some file under that directory nexus cannot name. A command given as a list
    is its words (`["bash", "-lc", "..."]`), as Codex may report it."""
    out: list[tuple[str, bool]] = []
    shell = Shell(cwd, out)
    if isinstance(command, list):
        if all(isinstance(c, str) for c in command) and command:
            shell.command([[(LIT, c)] for c in command], None)
    elif isinstance(command, str):
        shell.run(command)
    seen: dict[tuple[str, bool], None] = {}
    exact = 0
    for path, tree in out:
        if "\x00" in path:
            continue
        path = os.path.normpath(path)
        if not tree:
            exact += 1
            if exact > MAX_TARGETS:
                path, tree = os.path.dirname(path), True
        seen.setdefault((path, tree), None)
    return list(seen)
