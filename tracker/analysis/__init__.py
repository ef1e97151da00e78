"""Numbers that advise: exact odds of a position and luck read from the log, both on the
domain's procedures.

May import: storage, projections, domain.
"""
