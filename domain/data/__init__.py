"""Built-in rulesets and scenarios shipped with the tracker, as TOML data files."""
