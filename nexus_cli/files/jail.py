"""The path jail: a path is used only when both its written form and its real path (symlinks
resolved) lie inside one of the caller's project roots, and no part of it has a sensitive name
(refused for reads, writes and hidden from listings) or, for writes, names a place whose content
runs code or configures a tool (git hooks and config, the clients' settings, editors' tasks,
direnv, shell start-up files). A root is never `/`, the home folder or a folder above it. Files
are opened by walking the folders below the root one at a time without following links
(`O_NOFOLLOW`, `dir_fd`), so a folder swapped for a link after the check cannot redirect the
open, and only regular files are read or written (a FIFO or device would hang). Stdlib only."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat

from ..core.errors import NexusError

# sensitive names, matched case-insensitively against every part of the path below the root:
# credentials, keys, histories, the clients' own folders (Codex keeps auth.json in .codex) and
# git's folder (its config may hold a remote URL with a token)
DENY = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", "_netrc", ".npmrc",
        ".pypirc", ".git-credentials", ".pgpass", ".env", ".env.*", ".envrc", ".git", ".codex",
        ".claude", ".config", ".gcloud", ".boto", ".s3cfg", ".my.cnf", ".terraformrc",
        "*.tfstate", "*.tfstate.*", "*.tfvars", "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk",
        "*.keystore", "*.jks", "*.kdbx", "*.keytab", "*.gpg", "*.asc", "id_rsa*", "id_dsa*",
        "id_ecdsa*", "id_ed25519*", "id_xmss*", "*token*", "*secret*", "*credential*",
        "*password*", "*passwd*", ".htpasswd", "service-account*.json", "*serviceaccount*.json",
        "auth.json", "*_history", ".history", ".lesshst", ".xauthority",
        ".vault-token", ".dockercfg")
# where a write would run code or change how a tool behaves (writes only; still listed)
DENY_WRITE = (".vscode", ".idea", ".devcontainer", ".husky", ".cursor", ".gemini", ".mcp.json",
              ".yarnrc", ".yarnrc.yml", ".pnpmrc", ".gitconfig", ".gitmodules", ".bashrc",
              ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
              ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
              ".pythonrc", ".pythonstartup", "sitecustomize.py", "usercustomize.py", "*.pth",
              ".venv", "venv", ".direnv", ".pre-commit-config.yaml", "bunfig.toml",
              ".lefthook.yml", "lefthook.yml", ".lefthook")


def sensitive(name: str) -> bool:
    return rule(name) is not None


def rule(name: str, write: bool = False) -> str | None:
    """The denylist pattern `name` matches (reads; with write also the write-only one)."""
    low = name.lower()
    for pattern in DENY + (DENY_WRITE if write else ()):
        if fnmatch.fnmatchcase(low, pattern):
            return pattern
    return None


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def usable_root(project: str) -> str:
    """The caller's project root, unless it is `/`, the home folder or above it (no git
    repository: the project is the current folder), where the jail would hold every file."""
    real = os.path.realpath(project)
    homes = {os.path.realpath(os.path.expanduser("~"))}
    try:
        import pwd

        homes.add(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    except (ImportError, KeyError):
        pass
    if real == os.sep or any(inside(home, real) for home in homes):
        raise NexusError("path_outside_roots", project,
                         f"your project root is {real}, "
                         + ("the whole file system" if real == os.sep else
                            "your home folder or above it")
                         + " (outside a git repository the project is the current folder)",
                         "run it inside a project: a git repository or its own folder")
    return project


def check(raw: str, roots: list[str], store: str, key: str = "path",
          write: bool = False) -> str:
    """The real path to use, or a coded error. `raw` must be absolute."""
    if not os.path.isabs(raw):
        raise NexusError("invalid_argument", key, f"{raw!r} is not an absolute path",
                         "pass an absolute path inside your project")
    if "\x00" in raw:
        raise NexusError("invalid_argument", key, "the path holds a NUL byte", "fix the path")
    written = os.path.normpath(raw)
    real = os.path.realpath(written)
    real_roots = [os.path.realpath(r) for r in roots]
    for root, real_root in zip(roots, real_roots, strict=True):
        if (inside(written, root) or inside(written, real_root)) and inside(real, real_root):
            break
    else:
        raise NexusError("path_outside_roots", raw,
                         "path outside allowed roots (" + ", ".join(real_roots) + ")",
                         "use a path inside your project (`nexus info` and `whoami` show it)")
    below = os.path.relpath(real, real_root)
    parts = [] if below == "." else below.split(os.sep)
    parts += os.path.relpath(written, root).split(os.sep) if inside(written, root) else []
    if inside(real, os.path.realpath(store)):
        raise NexusError("path_denied", raw, "path denied by policy: it is in the nexus store",
                         "choose another file")
    for part in parts:
        if part in (".", ""):
            continue
        pattern = rule(part, write)
        if pattern is None:
            continue
        kind = ("a sensitive name: keys, tokens, credentials, histories, git's and the "
                "clients' folders" if rule(part) else
                "a place whose content runs code or configures a tool")
        raise NexusError("path_denied", raw, f"path denied by policy: {part!r} matches "
                         f"{pattern!r} ({kind})", "choose another file")
    return real


def root_of(real: str, roots: list[str]) -> str:
    for root in roots:
        real_root = os.path.realpath(root)
        if inside(real, real_root):
            return real_root
    raise NexusError("path_outside_roots", real, "path outside allowed roots",
                     "use a path inside your project")


def _moved(raw: str) -> NexusError:
    return NexusError("path_outside_roots", raw, "a folder on the path is a link or changed "
                      "while nexus opened it", "use the real path inside your project")


def parent(real: str, roots: list[str], raw: str, create: bool = False) -> tuple[int, str]:
    """An open descriptor of the folder holding `real` (the caller closes it) and the file's
    name in it, reached from the root one folder at a time without following a link; with
    `create`, missing folders are made on the way."""
    root = root_of(real, roots)
    below = os.path.relpath(real, root)
    if below == ".":
        raise NexusError("path_kind", raw, "is the project folder itself", "name a file")
    parts = below.split(os.sep)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _moved(raw) from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def open_file(real: str, roots: list[str], raw: str, flags: int, mode: int = 0o644,
              create_dirs: bool = False) -> int:
    """Open a regular file inside the jail (never following a link, never blocking on a FIFO);
    a directory, FIFO, socket or device is a coded `path_kind`."""
    dfd, name = parent(real, roots, raw, create=create_dirs)
    try:
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode,
                         dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _moved(raw) from None
            if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
                raise kind_error(raw, None) from None
            raise
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise kind_error(raw, st.st_mode)
    os.set_blocking(fd, True)
    return fd


def kind_error(raw: str, mode: int | None) -> NexusError:
    if mode is not None and stat.S_ISDIR(mode):
        return NexusError("path_kind", raw, "is a directory, use fs_list",
                          "list it with `nexus fs list`, or add a file name")
    what = ("a FIFO" if mode is not None and stat.S_ISFIFO(mode) else
            "a socket" if mode is not None and stat.S_ISSOCK(mode) else
            "a device" if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)) else
            "not a regular file")
    return NexusError("path_kind", raw, f"is {what}; nexus reads and writes regular files only",
                      "name a regular file")


def linked(raw: str, st: os.stat_result) -> NexusError | None:
    """A regular file with more than one hard link: another link may be outside the project,
    so nexus neither reads it nor writes into it."""
    if st.st_nlink > 1:
        return NexusError("path_denied", raw, f"the file has {st.st_nlink} hard links; another "
                          "may be outside the project, so nexus does not read or write it",
                          "copy it to a file of its own inside the project")
    return None
