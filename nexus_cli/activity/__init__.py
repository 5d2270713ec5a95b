"""The activity log: what happened in the store, who did it, to what (seed 004's list_events)."""
