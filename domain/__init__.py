"""The tracker's model: the campaign aggregate, its events, rulesets, scenarios, dice and rules.

Nothing here imports from `tracker` or `projections`; rules are pure functions over
frozen value objects, called by the aggregate before it records an event.
"""
