"""Use cases over the store: the `Tracker` application service, performing an action by name,
the action registry, players and their tokens, the undo log, history, replay, re-refereeing and
`verify`, and the words for what the game waits for.

May import: analysis, storage, projections, domain.
"""
