"""Team mode: the store on a PostgreSQL server shared by several machines and people."""
