"""The event store: database URLs, the registry of campaigns and seeds, the SQLAlchemy recorder
and the eventsourcing application that loads and saves a campaign.

May import: projections, domain.
"""
