"""The store: the per-user SQLite file (db.py) or the team's PostgreSQL database (pg.py).

What every open of it checks is kept here, where it costs nothing to import (the hooks open it
on every event; the migrations load only when the file is behind)."""

APPLICATION_ID = 0x4E585331  # 'NXS1': written once at creation; without it, not a nexus store
SCHEMA = 28  # the schema this nexus writes: the number of the last migration (migrations.py)
