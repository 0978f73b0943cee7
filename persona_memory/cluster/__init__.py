"""Workers that share the personas of one PostgreSQL database (issue 11; in progress).

- ``spread``: which live worker should own which persona (pure).
- The leases themselves are storage: ``persona_memory.storage.leases``.
"""
