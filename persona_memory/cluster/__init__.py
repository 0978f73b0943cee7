"""Workers that share the personas of one PostgreSQL database.

- ``spread``: which live worker should own which persona (pure).
- ``rounds``: one worker's lease round decided — acquire, renew, release (pure).
- ``worker``: the lease loop of one worker — membership, its share, ``owns(persona)``, the
  ``fence`` its writes carry, and a callback when it gains or loses a persona.
- ``registry``: the shared room registry's transitions — a room event taken by any worker,
  checked, applied and queued for every persona's owner; rooms and events as JSON.
- ``inbox``: an owner's inbox — settle a gained persona, take its events in order.
- ``forward``: a call forwarded to the persona's owner (one HTTP hop), the edits as JSON.
- ``node``: one worker's ``Memory`` (``open_cluster_memory``; ``persona-memory serve
  --worker``): how every call travels, in its docstring.
- The leases, the membership and the registry's tables are storage:
  ``persona_memory.storage.leases``, ``.membership`` and ``.room_registry``.
"""
