#!/usr/bin/env python3
"""A throwaway PostgreSQL cluster for the tests and benchmarks: initdb in a fresh temporary
directory, the server listening on a Unix socket there only (no TCP), trust authentication, run
as an unprivileged user (the `postgres` system user, else `nobody`, when started as root).

    scripts/pgcluster.py start [DIR]   prints the cluster's directory, then its URL
    scripts/pgcluster.py stop DIR
    scripts/pgcluster.py bindir         where the server binaries are (exit 1: not installed)

Also importable: `start()` returns a `Cluster` (dir, socket dir, url), `cluster.stop()`;
`start(tls={"cert": ..., "key": ..., "ca": ...})` also listens on a free port of 127.0.0.1 with
ssl=on (the server's certificate and key; "ca", optional, verifies client certificates), and
`start(tcp=True)` on 127.0.0.1 without TLS: `cluster.tcp_url(...)` names it.
Finds the server binaries on PATH, then in /usr/lib/postgresql/<newest>/bin."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

DB = "nexus"


def bindir() -> str | None:
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(os.path.realpath(found))
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    return os.path.dirname(candidates[-1]) if candidates else None


def _user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("no unprivileged user to run PostgreSQL as")


class Cluster:
    def __init__(self, folder: str, user: pwd.struct_passwd | None, bin_dir: str,
                 port: int = 5432) -> None:
        self.dir = folder
        self.data = os.path.join(folder, "data")
        self.sock = folder
        self.user = user
        self.bin = bin_dir
        self.role = user.pw_name if user else pwd.getpwuid(os.getuid()).pw_name
        self.port = port  # of the socket, and of 127.0.0.1 (start(tcp=True) or start(tls=...))
        self.url = self.url_for()

    def tcp_url(self, host: str = "127.0.0.1", user: str | None = None, **query: str) -> str:
        extra = "&".join(f"{k}={v}" for k, v in query.items())
        return f"postgresql://{user or self.role}@{host}:{self.port}/{DB}" + (
            f"?{extra}" if extra else "")

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        def demote() -> None:
            if self.user is not None:
                os.setgid(self.user.pw_gid)
                os.setuid(self.user.pw_uid)

        return subprocess.run(list(args), check=check, capture_output=True, text=True,
                              start_new_session=True,
                              preexec_fn=demote if self.user else None, cwd=self.dir)

    def url_for(self, schema: str | None = None, user: str | None = None) -> str:
        url = f"postgresql:///{DB}?host={self.sock}&user={user or self.role}"
        if self.port != 5432:
            url += f"&port={self.port}"
        if schema:
            url += f"&options=-csearch_path%3D{schema}"
        return url

    def stop(self) -> None:
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w",
                  "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def pause(self) -> None:
        """Stop the server, keeping its data (a server that went down)."""
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-t", "60",
                  "-l", os.path.join(self.dir, "log"), "start")


def certificates(folder: str) -> dict[str, str]:
    """A CA and a server certificate it signed for `localhost` (the openssl command line), for
    `start(tls=...)`: {"cert", "key", "root"} (root: the CA's certificate, a client's
    sslrootcert)."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.crt", "-days", "2", "-subj", "/CN=nexus-test-ca")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(folder, "server.ext"), "w") as fh:
        fh.write("subjectAltName=DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext")
    return {"cert": os.path.join(folder, "server.crt"),
            "key": os.path.join(folder, "server.key"), "root": os.path.join(folder, "ca.crt")}


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(folder: str | None = None, tcp: bool = False, tls: dict[str, str] | None = None,
          bytewise: bool = False) -> Cluster:
    bin_dir = bindir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
    user = _user()
    folder = folder or tempfile.mkdtemp(prefix="nexus-pg-", dir="/tmp")
    os.makedirs(folder, exist_ok=True)
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
    os.chmod(folder, 0o755)  # the socket is reached through it by the tests' other users
    cluster = Cluster(folder, user, bin_dir, _free_port() if tcp or tls else 5432)
    # text compared as people read it, not byte by byte, as on many a real server (en_US.UTF-8):
    # punctuation ignored first ("src/z" sorts after "src0"); nexus may not rely on byte order.
    # `bytewise` (the benchmarks): the C locale, since PostgreSQL opens an ICU collation at each
    # connection's start (~5 ms here), a cost of the server's setting, not of nexus
    collation = [] if bytewise else ["--locale-provider=icu", "--icu-locale=en-US-u-ka-shifted"]
    cluster._run(os.path.join(bin_dir, "initdb"), "-D", cluster.data, "-A", "trust", "-E", "UTF8",
                 "--locale=C", *collation, "-U", cluster.role, "--no-sync")
    with open(os.path.join(cluster.data, "postgresql.conf"), "a") as fh:
        fh.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{folder}'\n"
                 "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                 "max_connections = 200\nshared_buffers = 32MB\n")
        if tcp or tls:
            fh.write(f"listen_addresses = '127.0.0.1'\nport = {cluster.port}\n")
        for name, path in (tls or {}).items():  # the server reads them as its own user
            target = os.path.join(cluster.data, f"tls-{name}.pem")
            shutil.copyfile(path, target)
            os.chmod(target, 0o600)
            if user is not None:
                os.chown(target, user.pw_uid, user.pw_gid)
            fh.write(f"ssl_{name}_file = '{target}'\n")
        if tls:
            fh.write("ssl = on\n")
    with open(os.path.join(cluster.data, "pg_hba.conf"), "w") as fh:
        # one role authenticates with a password (SCRAM), the rest are trusted (tests only);
        # over TCP also: a cleartext password, a client certificate, TLS only, no TLS
        fh.write("local all nexus_pw scram-sha-256\nlocal all nexus_md5 md5\n"
                 "local all all trust\n")
        if tcp or tls:
            fh.write("host all nexus_pw 127.0.0.1/32 scram-sha-256\n"
                     "host all nexus_clear 127.0.0.1/32 password\n"
                     "hostnossl all nexus_tlsonly 127.0.0.1/32 reject\n"
                     "hostssl all nexus_plainonly 127.0.0.1/32 reject\n"
                     "hostssl all nexus_cert 127.0.0.1/32 cert\n"
                     "host all all 127.0.0.1/32 trust\n")
    cluster.resume()
    for _ in range(100):
        done = cluster._run(os.path.join(bin_dir, "createdb"), "-h", folder, "-p",
                            str(cluster.port), "-U", cluster.role, DB, check=False)
        if done.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise RuntimeError(f"createdb failed: {done.stderr}")
    return cluster


def main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        cluster = start(argv[1] if len(argv) > 1 else None)
        print(cluster.dir)
        print(cluster.url)
        return 0
    if argv[:1] == ["bindir"]:
        found = bindir()
        print(found or "")
        return 0 if found else 1
    if argv[:1] == ["stop"] and len(argv) == 2:
        data = os.path.join(argv[1], "data")
        st = os.stat(data)
        user = pwd.getpwuid(st.st_uid) if os.geteuid() == 0 else None
        Cluster(argv[1], user, bindir() or "").stop()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
