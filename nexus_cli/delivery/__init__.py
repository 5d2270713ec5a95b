"""Getting messages in front of the model: announcements, the automatic turn limit, idle
notices and waiting for news. Stdlib only: the hooks use all of it."""
