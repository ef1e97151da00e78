"""The event store: database URLs, the registry of campaigns and seeds, the datastore (engine,
transactions, the event tables), the recorders and the eventsourcing application that loads
and saves a campaign; the side tables' versioned upgrades (`migrations`).

May import: projections, domain.
"""

# The database a command opens when none is named (--db, TRACKER_DB): here, not in `store`,
# so that a command that only needs to know whether it exists imports no database library.
DEFAULT_DB = "campaign.db"
