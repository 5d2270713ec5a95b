"""The team database's security, made from the declarations of the tables' owners
(core/store/policy.py): row-level security for every table, the grants of the member and
administrator roles, nexus's SECURITY DEFINER functions, and a cap on what one row may hold.
`nexus team init` prints it (for a DBA to review) or applies it; it is idempotent, and applying
it again after an upgrade brings a secured database's schema and security current together.

The roles: `<prefix>_member`, the group every member's login role is in (the team's rights:
reading, and calling nexus's functions), `<prefix>_admin`, the administrator: team-wide settings
(the default run policy) are its alone, and `<prefix>_writer`, no login, which owns the
functions of nexus's declared writes (policy.write) and holds the write rights the tables'
declarations give, under row-level security like any member: members write through functions
only. The prefix is `nexus` for the `public` schema, `nexus_<schema>` otherwise, so teams in
other schemas of one database are apart. Identity is the login role (`session_user`): a row's
owner is what the server records, never a column a member fills in."""

from __future__ import annotations

import importlib
import re

from ..core.store import policy

# the modules that own tables, each with TEAM_TABLES (table -> policy.Table) and, where writes
# reach other members' rows, TEAM_FUNCTIONS (policy.Function ...)
OWNERS = ("core.store.migrations", "core.sessions", "core.events", "core.store.fulltext",
          "messages.mailbox", "tasks.ledger", "workspace.projects", "workspace.docs",
          "workspace.streams", "workspace.ratelimit", "workspace.find", "reservations.leases",
          "insight.index", "runs.ledger", "approvals.ledger", "team.move")
ROW_MAX = 24 << 20  # bytes of one row as text (a 10 MB asset is 20 MB of hex); the wire
# client refuses a row past pgwire.ROW_MAX (32 MB) on the way back


def _owners() -> list:
    return [importlib.import_module(f"nexus_cli.{m}") for m in OWNERS]


def tables() -> dict[str, policy.Table]:
    out: dict[str, policy.Table] = {}
    for module in _owners():
        for name, table in getattr(module, "TEAM_TABLES", {}).items():
            assert name not in out, f"{name} is declared twice"
            out[name] = table
    return out


def functions() -> list[policy.Function]:
    return [f for module in _owners() for f in getattr(module, "TEAM_FUNCTIONS", ())]


def prefix(schema: str) -> str:
    return "nexus" if schema == "public" else f"nexus_{schema}"


def ident(name: str) -> str:
    """A name as SQL writes it: plain when it is a plain name, else quoted."""
    if re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _policies(name: str, t: policy.Table) -> list[str]:
    out = [f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY",
           # every policy of the table goes first: the declaration is the whole of it
           f"DO $nexus$ DECLARE p record; BEGIN FOR p IN SELECT policyname FROM pg_policies"
           f" WHERE schemaname = current_schema() AND tablename = {literal(name)} LOOP"
           f" EXECUTE format('DROP POLICY %I ON {name}', p.policyname); END LOOP; END $nexus$"]
    if t.read is not None:
        out.append(f"CREATE POLICY nexus_read ON {name} FOR SELECT USING ({t.read})")
    if t.insert is not None:
        check = policy.when(policy.OWNER, t.insert) if t.owner else t.insert
        out.append(f"CREATE POLICY nexus_insert ON {name} FOR INSERT WITH CHECK ({check})")
    if t.update is not None:
        check = policy.when(policy.OWNER, t.update) if t.owner else t.update
        out.append(f"CREATE POLICY nexus_update ON {name} FOR UPDATE USING ({t.update})"
                   f" WITH CHECK ({check})")
    if t.delete is not None:
        out.append(f"CREATE POLICY nexus_delete ON {name} FOR DELETE USING ({t.delete})")
    return out


def _grants(name: str, t: policy.Table, member: str, writer: str) -> list[str]:
    """The writer's rights as the table's declaration gives them (row-level security still
    decides which rows); a member's: reading."""
    out = [f"REVOKE ALL ON {name} FROM PUBLIC, {member}, {writer}",
           f"GRANT SELECT ON {name} TO {writer}"]
    if t.read is not None:
        out.append(f"GRANT SELECT ON {name} TO {member}")
    rights = [r for r, rule in (("INSERT", t.insert), ("DELETE", t.delete)) if rule is not None]
    if rights:
        out.append(f"GRANT {', '.join(rights)} ON {name} TO {writer}")
    if t.update is not None:
        columns = f" ({', '.join(t.columns)})" if t.columns else ""
        out.append(f"GRANT UPDATE{columns} ON {name} TO {writer}")
    return out


def _cap(name: str) -> list[str]:
    """One row at most ROW_MAX bytes as text, whoever writes it (a coded error past it)."""
    return [f"DROP TRIGGER IF EXISTS nexus_row_cap ON {name}",
            f"CREATE TRIGGER nexus_row_cap BEFORE INSERT OR UPDATE ON {name} FOR EACH ROW"
            " EXECUTE FUNCTION nexus_row_cap()"]


def path(schema: str) -> str:
    """The search path every function of nexus's runs with: the schema between the catalog and
    the caller's temporary tables, never after them."""
    return f"pg_catalog, {ident(schema)}, pg_temp"


def _function(fn: policy.Function, member: str, schema: str) -> list[str]:
    from ..core.store.sqltext import placeholders

    body, names = placeholders(fn.team)
    args = ", ".join(fn.types[n] for n in names or ())
    signature = f"nexus_{fn.name}({args})"
    return [f"DROP FUNCTION IF EXISTS {signature}",
            f"CREATE FUNCTION {signature} RETURNS bigint LANGUAGE sql SECURITY DEFINER"
            f" SET search_path = {path(schema)} AS $nexus$ WITH done AS ({body} RETURNING 1)"
            " SELECT count(*) FROM done $nexus$",
            f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC",
            f"GRANT EXECUTE ON FUNCTION {signature} TO {member}"]


def writes() -> list[str]:
    """Every statement declared with policy.write, in a stable order: those its modules declare
    as they load, and each written where it runs (`policy.write("...")`), found in the source."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    for file in sorted(root.rglob("*.py")):
        text = file.read_text(encoding="utf-8")
        if ".write(" not in text:
            continue
        module = importlib.import_module(".".join(("nexus_cli", *file.relative_to(root)
                                                   .with_suffix("").parts)))
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "write" and isinstance(node.func.value, ast.Name)
                    and getattr(module, node.func.value.id, None) is policy and node.args):
                try:
                    policy.write(eval(compile(ast.Expression(node.args[0]), str(file), "eval"),
                                      vars(module)))
                except NameError:
                    pass  # built at run time: declared as its module loads
    for update in policy.UPDATES:
        policy.write(update.declared)
    return sorted(policy.WRITES)


def _writes() -> list[str]:
    """A function for each declared write, as the writer: its parameters' types the server's
    own reading of the statement (PREPARE)."""
    from ..core.store.sqltext import placeholders

    out = []
    for sql in writes():
        stmt = placeholders(sql)[0]
        body = stmt if policy.returns(sql) else \
            f"WITH done AS ({stmt} RETURNING 1) SELECT count(*) FROM done"
        out.append(f"SELECT nexus_writer({literal(policy.writer(sql))}, {literal(stmt)},"
                   f" {literal(body)})")
    return [*out, "DROP FUNCTION nexus_writer(text, text, text)"]


def _writer_maker(member: str, writer: str, schema: str) -> str:
    """The helper `_writes` calls (dropped after): PREPARE the statement to learn its
    parameters' types, make its function, hand it to the writer, let members call it."""
    fn = f"{ident(schema)}.%I(%s)"
    return ("CREATE OR REPLACE FUNCTION nexus_writer(name text, stmt text, body text) RETURNS"
            f" void LANGUAGE plpgsql SET search_path = {path(schema)} AS $nexus$ DECLARE args text;"
            " BEGIN EXECUTE 'PREPARE nexus_probe AS ' || stmt;"
            " SELECT coalesce(array_to_string(parameter_types::text[], ', '), '') INTO args FROM"
            " pg_prepared_statements WHERE pg_prepared_statements.name = 'nexus_probe';"
            " EXECUTE 'DEALLOCATE nexus_probe';"
            f" EXECUTE format('CREATE FUNCTION {fn} RETURNS SETOF bigint LANGUAGE sql SECURITY"
            f" DEFINER SET search_path = {path(schema)} AS %L', name, args, body);"
            f" EXECUTE format('ALTER FUNCTION {fn} OWNER TO {writer}', name, args);"
            f" EXECUTE format('REVOKE ALL ON FUNCTION {fn} FROM PUBLIC', name, args);"
            f" EXECUTE format('GRANT EXECUTE ON FUNCTION {fn} TO {member}', name, args);"
            " END $nexus$")


def statements(schema: str, roles: list[str], admins: list[str]) -> list[str]:
    """The security of `schema`: its roles (created when missing), the members' and the
    administrators' grants, every table's row-level security and row cap, the functions."""
    base = prefix(schema)
    member, admin = ident(base + "_member"), ident(base + "_admin")
    writer = ident(base + "_writer")
    out = []
    for group, login in ((base + "_member", False), (base + "_admin", False),
                         (base + "_writer", False),
                         *((r, True) for r in [*roles, *admins])):
        out.append(f"DO $nexus$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname ="
                   f" {literal(group)}) THEN CREATE ROLE {ident(group)}"
                   f" {'LOGIN' if login else 'NOLOGIN'}; END IF; END $nexus$")
    out += [f"GRANT {member} TO {admin}", *(f"GRANT {member} TO {ident(r)}" for r in roles),
            *(f"GRANT {member}, {admin} TO {ident(r)}" for r in admins),
            f"GRANT USAGE ON SCHEMA {ident(schema)} TO {member}, {writer}",
            f"GRANT {writer} TO CURRENT_USER",  # (to hand it the functions)
            # the administrator: a member of its role, or whoever owns the schema's tables
            "CREATE OR REPLACE FUNCTION nexus_is_admin() RETURNS boolean LANGUAGE sql STABLE"
            f" SECURITY DEFINER SET search_path = {path(schema)} AS $nexus$ SELECT session_user ="
            f" current_user OR pg_has_role(session_user, {literal(base + '_admin')}, 'MEMBER')"
            " $nexus$",
            "REVOKE ALL ON FUNCTION nexus_is_admin() FROM PUBLIC",
            f"GRANT EXECUTE ON FUNCTION nexus_is_admin() TO {member}, {writer}",
            "CREATE OR REPLACE FUNCTION nexus_row_cap() RETURNS trigger LANGUAGE plpgsql"
            f" SET search_path = {path(schema)} AS"
            f" $nexus$ BEGIN IF octet_length(NEW::text) > {ROW_MAX} THEN RAISE EXCEPTION"
            " 'nexus: a row of % bytes is more than one row may hold (% bytes)',"
            f" octet_length(NEW::text), {ROW_MAX} USING ERRCODE = '54000'; END IF;"
            " RETURN NEW; END $nexus$"]
    for name, table in sorted(tables().items()):
        out += _policies(name, table) + _grants(name, table, member, writer) + _cap(name)
    # the functions an older nexus made go first (whatever their parameters were)
    names = ", ".join(literal(f"nexus_{fn.name}") for fn in functions())
    out.append("DO $nexus$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM"
               " pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND"
               f" (starts_with(p.proname, 'nexus_w_') OR p.proname IN ({names})) LOOP"
               " EXECUTE 'DROP FUNCTION ' || f; END LOOP; END $nexus$")
    for fn in functions():
        out += _function(fn, member, schema)
    out += [_writer_maker(member, writer, schema), *_writes()]
    # the full-text triggers write ws_words, which members may only read: as their owner
    from ..core.store import fulltext

    out += [f"ALTER FUNCTION {f}() SECURITY DEFINER SET search_path = {path(schema)}"
            for f in fulltext.TRIGGER_FUNCTIONS]
    return out
