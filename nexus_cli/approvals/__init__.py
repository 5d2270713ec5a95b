"""Permission requests of runs, answered by a peer or a person (seed 001's `approval_list` and
`approval_respond`): the PermissionRequest hook registers one and waits; `nexus approve` answers."""
