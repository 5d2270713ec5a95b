"""Direct messages. The conditions below are what a message's state means, kept here, light, for
the team store's tool-call check (hook/quick.py) as well as the mailbox."""

UNREAD = "read_at IS NULL AND expired_at IS NULL"
# what a tool call's hook announces (and what a news marker stands for): unread, not yet
# announced, not held back for a task's delivery
ANNOUNCEABLE = f"{UNREAD} AND delivered_at IS NULL AND defer = 0"
