"""Campaigns as files: the export format and reading a file of it, export and import, and play by
e-mail (an export continued onto the same campaign elsewhere).

May import: service, analysis, storage, projections, domain.
"""
