"""Files in the caller's project (seed 001's fs_read, fs_list, fs_stat and opt-in fs_write), for
agents whose own sandbox cannot see a peer's workspace."""
