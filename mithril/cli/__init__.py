"""The `mithril` command line."""
