"""Baselines: a run's values saved and a later run compared with them (snapshot), and the ratchet that
keeps the kernels of a set from growing against one (ratchet)."""
