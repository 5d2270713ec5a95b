"""Session insight: what every session did, from the transcripts both clients write (log, stats,
search with a full-text index, the session list, titles), and who waits on whom."""
