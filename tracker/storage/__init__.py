"""The event store: database URLs, the registry of campaigns and seeds, the datastore (engine,
transactions, the event tables), the recorders and the eventsourcing application that loads
and saves a campaign; the side tables' versioned upgrades (`migrations`).

May import: projections, domain.
"""
