"""The shared workspace of seed 004: projects and their assets, the global strategy and docs,
meetings, meeting and global chat, maintenance of the chat, the per-instance rate limit, and one
full-text index over all of it (`nexus find`)."""
