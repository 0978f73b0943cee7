"""Workers that share the personas of one PostgreSQL database (issue 11; in progress).

- ``spread``: which live worker should own which persona (pure).
- ``rounds``: one worker's lease round decided — acquire, renew, release (pure).
- ``worker``: the lease loop of one worker — membership, its share, ``owns(persona)``, and a
  callback when it gains or loses a persona.
- The leases and the membership themselves are storage: ``persona_memory.storage.leases`` and
  ``persona_memory.storage.membership``.
"""
