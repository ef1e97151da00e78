"""Turn reports and what they draw: the report's data read from the projections, its Markdown,
BBCode, HTML and JSON renderings and their templates, the SVG board map, the terminal board and
the words that describe events.

May import: service, analysis, storage, projections, domain.
"""
